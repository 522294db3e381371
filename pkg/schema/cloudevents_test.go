package schema_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

const ceFull = `{"specversion":"1.0","id":"1","source":"/src","type":"t","data":{"a":1}}`

func TestDecodeBatch_CloudEvents(t *testing.T) {
	const head = `{"specversion":"1.0","id":"1","source":"/src","type":"t"`
	with := func(member string) string { return strings.Replace(ceFull, `"type":"t",`, `"type":"t",`+member+`,`, 1) }
	bad := eventgrid.EInvalidEvent
	tests := []eventCase{
		{name: "Minimal", in: `{"specversion":"1.0","id":"1","source":"/src","type":"t"}`, want: head + `}`},
		{name: "Full", in: ceFull, want: head + `,"data":{"a":1}}`},
		{name: "AllAttributesReordered",
			in: `{"data":[1, 2],"exta":"x","dataschema":"http://s","datacontenttype":"application/json","time":"2020-01-01T00:00:00.5+01:00",` +
				`"subject":"sub","type":"t","source":"/src","id":"1","specversion":"1.0","extb":2}`,
			want: head + `,"subject":"sub","time":"2020-01-01T00:00:00.5+01:00","datacontenttype":"application/json","dataschema":"http://s","exta":"x","extb":2,"data":[1, 2]}`},
		{name: "AttributeCasing",
			in:   `{"specVersion":"1.0","ID":"1","Source":"/src","TYPE":"t","dataSchema":"http://s","DataContentType":"text/plain","Data":"hi"}`,
			want: head + `,"datacontenttype":"text/plain","dataschema":"http://s","data":"hi"}`},
		{name: "SpecVersionRC1", in: strings.Replace(ceFull, `"1.0"`, `"1.0-rc1"`, 1), want: head + `,"data":{"a":1}}`},
		{name: "ExtensionsInInputOrder",
			in:   with(`"zeta":true,"alpha":"a","dataversion":"1.0","num":-1500`),
			want: head + `,"zeta":true,"alpha":"a","dataversion":"1.0","num":-1500,"data":{"a":1}}`},
		{name: "EscapedExtensionName", in: with(`"\u0066oo":"x"`), want: head + `,"foo":"x","data":{"a":1}}`},
		{name: "NullAttributesAbsent",
			in:   with(`"subject":null,"time":null,"datacontenttype":null,"dataschema":null,"ext":null,"data_base64":null`),
			want: head + `,"data":{"a":1}}`},
		{name: "DataNull", in: strings.Replace(ceFull, `{"a":1}`, `null`, 1), want: head + `,"data":null}`},
		{name: "DataString", in: strings.Replace(ceFull, `{"a":1}`, `"x\ty"`, 1), want: head + `,"data":"x\ty"}`},
		{name: "DataNumber", in: strings.Replace(ceFull, `{"a":1}`, `0.10`, 1), want: head + `,"data":0.10}`},
		{name: "DataBool", in: strings.Replace(ceFull, `{"a":1}`, `true`, 1), want: head + `,"data":true}`},
		{name: "DataArray", in: strings.Replace(ceFull, `{"a":1}`, `[]`, 1), want: head + `,"data":[]}`},
		{name: "DataAbsent", in: strings.Replace(ceFull, `,"data":{"a":1}`, ``, 1), want: head + `}`},
		{name: "DataBase64", in: strings.Replace(ceFull, `"data":{"a":1}`, `"Data_Base64":"AAEC/w=="`, 1), want: head + `,"data_base64":"AAEC/w=="}`},
		{name: "DataBase64Empty", in: strings.Replace(ceFull, `"data":{"a":1}`, `"data_base64":""`, 1), want: head + `,"data_base64":""}`},
		{name: "DataBase64EscapedSlash", in: strings.Replace(ceFull, `"data":{"a":1}`, `"data_base64":"ab\/+"`, 1), want: head + `,"data_base64":"ab\/+"}`},
		{name: "DataNullWithDataBase64", in: strings.Replace(ceFull, `"data":{"a":1}`, `"Data":null,"Data_Base64":"QQ=="`, 1), want: head + `,"data_base64":"QQ=="}`},
		{name: "TimeLowerCaseTZ", in: with(`"time":"2020-02-29t23:59:60z"`), want: head + `,"time":"2020-02-29t23:59:60z","data":{"a":1}}`},

		{name: "ExactAndFoldedNames", in: `{"ID":"no","id":"1","specversion":"1.0","source":"/src","type":"t"}`, code: eventgrid.EInvalidJSON,
			msg: `event at index 0: member name "id" appears more than once in its object`},
		{name: "DuplicateExtension", in: with(`"Foo":"folded","foo":"exact"`), code: eventgrid.EInvalidJSON,
			msg: `event at index 0: member name "foo" appears more than once in its object`},
		{name: "DuplicateInData", in: strings.Replace(ceFull, `{"a":1}`, `{"role":"viewer","role":"admin"}`, 1), code: eventgrid.EInvalidJSON,
			msg: `event at index 0: member name "data.role" appears more than once in its object`},
		{name: "InvalidUTF8", in: with("\"ext\":\"a\xe2\x82\""), code: eventgrid.EInvalidJSON,
			msg: `event at index 0: "ext" is not valid UTF-8`},
		{name: "SpecVersionMissing", in: strings.Replace(ceFull, `"specversion":"1.0",`, ``, 1), code: bad, msg: `event at index 0: "specversion" is required`},
		{name: "SpecVersion03", in: strings.Replace(ceFull, `"1.0"`, `"0.3"`, 1), code: bad, msg: `event at index 0: "specversion" must be "1.0", not "0.3"`},
		{name: "SpecVersionNumber", in: strings.Replace(ceFull, `"1.0"`, `1.0`, 1), code: bad, msg: `"specversion" must be a string`},
		{name: "IDMissing", in: strings.Replace(ceFull, `"id":"1",`, ``, 1), code: bad, msg: `event at index 0: "id" is required`},
		{name: "IDEmpty", in: strings.Replace(ceFull, `"id":"1"`, `"id":""`, 1), code: bad, msg: `event at index 0: "id" must not be empty`},
		{name: "IDNumber", in: strings.Replace(ceFull, `"id":"1"`, `"id":1`, 1), code: bad, msg: `event at index 0: "id" must be a string`},
		{name: "SourceMissing", in: strings.Replace(ceFull, `"source":"/src",`, ``, 1), code: bad, msg: `event at index 0: "source" is required`},
		{name: "SourceEmpty", in: strings.Replace(ceFull, `"/src"`, `""`, 1), code: bad, msg: `event at index 0: "source" must not be empty`},
		{name: "TypeMissing", in: strings.Replace(ceFull, `"type":"t",`, ``, 1), code: bad, msg: `event at index 0: "type" is required`},
		{name: "TypeNull", in: strings.Replace(ceFull, `"type":"t"`, `"type":null`, 1), code: bad, msg: `event at index 0: "type" is required`},
		{name: "TypeObject", in: strings.Replace(ceFull, `"type":"t"`, `"type":{}`, 1), code: bad, msg: `event at index 0: "type" must be a string`},
		{name: "SubjectNumber", in: with(`"subject":5`), code: bad, msg: `event at index 0: "subject" must be a string`},
		{name: "DataContentTypeBool", in: with(`"datacontenttype":true`), code: bad, msg: `"datacontenttype" must be a string`},
		{name: "DataSchemaArray", in: with(`"dataschema":[]`), code: bad, msg: `"dataschema" must be a string`},
		{name: "TimeNotRFC3339", in: with(`"time":"2020-01-01 00:00:00"`), code: bad, msg: `event at index 0: "time" must be an RFC 3339 timestamp, not "2020-01-01 00:00:00"`},
		{name: "TimeNoZone", in: with(`"time":"2020-01-01T00:00:00"`), code: bad, msg: `"time" must be an RFC 3339 timestamp`},
		{name: "TimeBadDay", in: with(`"time":"2021-02-29T00:00:00Z"`), code: bad, msg: `"time" must be an RFC 3339 timestamp`},
		{name: "TimeBadHour", in: with(`"time":"2021-02-01T24:00:00Z"`), code: bad, msg: `"time" must be an RFC 3339 timestamp`},
		{name: "TimeBadOffset", in: with(`"time":"2021-02-01T00:00:00+0100"`), code: bad, msg: `"time" must be an RFC 3339 timestamp`},
		{name: "TimeEmptyFraction", in: with(`"time":"2021-02-01T00:00:00.Z"`), code: bad, msg: `"time" must be an RFC 3339 timestamp`},
		{name: "TimeNumber", in: with(`"time":1`), code: bad, msg: `"time" must be a string`},
		{name: "DataAndDataBase64", in: strings.Replace(ceFull, `"data":{"a":1}`, `"data":"x","data_base64":"QQ=="`, 1), code: bad,
			msg: `event at index 0: "data_base64" cannot be present together with "data"`},
		{name: "DataBase64Invalid", in: strings.Replace(ceFull, `"data":{"a":1}`, `"data_base64":"QQ="`, 1), code: bad, msg: `event at index 0: "data_base64" must be standard base64`},
		{name: "DataBase64URLAlphabet", in: strings.Replace(ceFull, `"data":{"a":1}`, `"data_base64":"-_-_"`, 1), code: bad, msg: `"data_base64" must be standard base64`},
		{name: "DataBase64Number", in: strings.Replace(ceFull, `"data":{"a":1}`, `"data_base64":1`, 1), code: bad, msg: `"data_base64" must be a string`},
		{name: "ExtensionObject", in: with(`"ext":{"a":1}`), code: bad, msg: `event at index 0: "ext" must be a string, number or boolean, not an object`},
		{name: "ExtensionArray", in: with(`"ext":[1]`), code: bad, msg: `event at index 0: "ext" must be a string, number or boolean, not an array`},
		{name: "ExtensionBadName", in: with(`"my-ext":"x"`), code: bad, msg: `event at index 0: "my-ext" is not a valid attribute name`},
		{name: "ExtensionEmptyName", in: with(`"":"x"`), code: bad, msg: `event at index 0: "" is not a valid attribute name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := schema.DecodeBatch(eventgrid.CloudEventSchemaV1_0, "t1", []byte("["+tt.in+"]"), accepted)
			if tt.code != "" {
				MustFail(t, err, tt.code, tt.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			MustBeValidEvents(t, evs)
			if len(evs) != 1 || string(evs[0].Body) != tt.want {
				t.Fatalf("Body =\n%s\nwant\n%s", evs[0].Body, tt.want)
			}
		})
	}
}

func TestDecodeBatch_CloudEventsFields(t *testing.T) {
	evs := MustDecodeBatch(t, eventgrid.CloudEventSchemaV1_0, `[`+ceFull+`,
		{"specversion":"1.0","id":"a\u00e9","source":"s","type":"t\/2","subject":"x"}]`)
	if ev := evs[0]; ev.ID != "1" || ev.Type != "t" || ev.HasSubject || ev.Subject != "" || ev.DataVersion != "" {
		t.Errorf("event 0 = %+v", *ev)
	}
	if ev := evs[1]; ev.ID != "aé" || ev.Type != "t/2" || !ev.HasSubject || ev.Subject != "x" {
		t.Errorf("event 1 = %+v", *ev)
	}
}

func TestDecodeBatch_CloudEventsManyExtensions(t *testing.T) {
	// Many extensions keep their input order, and a name given again in
	// another case is refused.
	var in, want strings.Builder
	in.WriteString(`{"specversion":"1.0","id":"1","source":"s","type":"t"`)
	want.WriteString(`{"specversion":"1.0","id":"1","source":"s","type":"t"`)
	for i := range 40 {
		name := "e" + strings.Repeat("x", i)
		in.WriteString(`,"` + name + `":"v"`)
		want.WriteString(`,"` + name + `":"v"`)
	}
	want.WriteString(`}`)
	evs := MustDecodeBatch(t, eventgrid.CloudEventSchemaV1_0, "["+in.String()+"},"+in.String()+"}]")
	for i, ev := range evs {
		if string(ev.Body) != want.String() {
			t.Fatalf("event %d Body =\n%s\nwant\n%s", i, ev.Body, want.String())
		}
	}
	_, err := schema.DecodeBatch(eventgrid.CloudEventSchemaV1_0, "t1",
		[]byte("["+in.String()+"},"+in.String()+`,"EXXXXX":"again"}]`), accepted)
	MustFail(t, err, eventgrid.EInvalidJSON, `event at index 1: member name "EXXXXX" appears more than once in its object`)
}

// TestDecodeBatch_FoldExtensionNames: the original module's CloudEvents
// example (https://learn.microsoft.com/azure/event-grid/edge/event-schemas,
// "Example — cloud event") is read as it read it, with its
// "dataVersion" delivered as the extension "dataversion" and "1.0-rc1" as
// "1.0"; without FoldExtensionNames the name is refused as before. A name
// that is no attribute name in any case stays refused.
func TestDecodeBatch_FoldExtensionNames(t *testing.T) {
	const example = `[{
       "id": "1807",
       "type": "recordInserted",
       "source": "myapp/vehicles/motorcycles",
       "time": "2017-08-10T21:03:07+00:00",
       "datacontenttype": "application/json",
       "data": {
            "make": "Ducati",
            "model": "Monster"
        },
        "dataVersion": "1.0",
        "specVersion": "1.0-rc1"
}]`
	const want = `{"specversion":"1.0","id":"1807","source":"myapp/vehicles/motorcycles","type":"recordInserted",` +
		`"time":"2017-08-10T21:03:07+00:00","datacontenttype":"application/json","dataversion":"1.0","data":{
            "make": "Ducati",
            "model": "Monster"
        }}`
	fold := schema.Scratch{FoldExtensionNames: true}
	evs, err := fold.DecodeBatch(eventgrid.CloudEventSchemaV1_0, "t1", []byte(example), accepted)
	if err != nil {
		t.Fatal(err)
	}
	MustBeValidEvents(t, evs)
	if string(evs[0].Body) != want {
		t.Fatalf("Body =\n%s\nwant\n%s", evs[0].Body, want)
	}
	one, err := fold.DecodeOne(eventgrid.CloudEventSchemaV1_0, "t1", []byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","MyExt2":true}`), "", accepted)
	if err != nil || !strings.Contains(string(one.Body), `"myext2":true`) {
		t.Fatalf("DecodeOne = %v, %v; want the extension myext2", one, err)
	}

	_, err = schema.DecodeBatch(eventgrid.CloudEventSchemaV1_0, "t1", []byte(example), accepted)
	MustFail(t, err, eventgrid.EInvalidEvent, `event at index 0: "dataVersion" is not a valid attribute name`, `it is not read as "dataversion"`)
	for _, name := range []string{"data-Version", "Dätä", "X_y"} {
		_, err = fold.DecodeBatch(eventgrid.CloudEventSchemaV1_0, "t1", []byte(`[{"specversion":"1.0","id":"1","source":"s","type":"t","`+name+`":1}]`), accepted)
		MustFail(t, err, eventgrid.EInvalidEvent, "is not a valid attribute name")
	}
}
