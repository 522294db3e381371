package schema_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

const egFull = `{"id":"1","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","data":{"a":1},"dataVersion":"1.0"}`

func TestDecodeBatch_EventGridSchema(t *testing.T) {
	const tail = `,"dataVersion":"1.0","metadataVersion":"1"}`
	const head = `{"id":"1","topic":"t1","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z"`
	tests := []eventCase{
		{name: "Full", in: egFull, want: head + `,"data":{"a":1}` + tail},
		{name: "KeyOrderAndSpacing",
			in:   "{ \"dataVersion\" : \"1.0\",\n\"data\" : [ 1 , 2 ], \"eventTime\":\"2020-01-01T00:00:00Z\",\t\"eventType\":\"et\",\"subject\":\"s\",\"id\":\"1\" }",
			want: head + `,"data":[ 1 , 2 ]` + tail},
		{name: "PascalCase",
			in:   `{"Id":"1","Topic":"T1","Subject":"s","EventType":"et","EventTime":"2020-01-01T00:00:00Z","Data":null,"DataVersion":"1.0","MetadataVersion":null}`,
			want: head + `,"data":null` + tail},
		{name: "EscapedKey",
			in:   `{"\u0069d":"1","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1.0"}`,
			want: head + tail},
		{name: "UnknownPropertiesDropped",
			in:   `{"id":"1","extra":{"x":1},"subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1.0","foo":2}`,
			want: head + tail},
		{name: "DataAbsent", in: strings.Replace(egFull, `"data":{"a":1},`, "", 1), want: head + tail},
		{name: "DataNull", in: strings.Replace(egFull, `{"a":1}`, `null`, 1), want: head + `,"data":null` + tail},
		{name: "DataArray", in: strings.Replace(egFull, `{"a":1}`, `[{"b":[]},"x"]`, 1), want: head + `,"data":[{"b":[]},"x"]` + tail},
		{name: "DataString", in: strings.Replace(egFull, `{"a":1}`, `"a\"b\u00e9"`, 1), want: head + `,"data":"a\"b\u00e9"` + tail},
		{name: "DataNumber", in: strings.Replace(egFull, `{"a":1}`, `-1.50e+3`, 1), want: head + `,"data":-1.50e+3` + tail},
		{name: "DataBool", in: strings.Replace(egFull, `{"a":1}`, `false`, 1), want: head + `,"data":false` + tail},
		{name: "EscapedStringsCopiedRaw",
			in:   `{"id":"a\/b","subject":"\u00e9\n","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1.0"}`,
			want: `{"id":"a\/b","topic":"t1","subject":"\u00e9\n","eventType":"et","eventTime":"2020-01-01T00:00:00Z"` + tail},
		{name: "EmptySubjectAndDataVersion",
			in:   `{"id":"1","subject":"","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":""}`,
			want: `{"id":"1","topic":"t1","subject":"","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"","metadataVersion":"1"}`},
		{name: "TopicSameCase", in: strings.Replace(egFull, `{"id":"1",`, `{"id":"1","topic":"t1",`, 1), want: head + `,"data":{"a":1}` + tail},
		{name: "TopicOtherCase", in: strings.Replace(egFull, `{"id":"1",`, `{"id":"1","topic":"T1",`, 1), want: head + `,"data":{"a":1}` + tail},
		{name: "TopicEscaped", in: strings.Replace(egFull, `{"id":"1",`, `{"id":"1","topic":"\u00541",`, 1), want: head + `,"data":{"a":1}` + tail},
		{name: "MetadataVersion1", in: strings.Replace(egFull, `{"id":"1",`, `{"metadataVersion":"1","id":"1",`, 1), want: head + `,"data":{"a":1}` + tail},
		{name: "EventTimeFractionAndOffset", in: strings.Replace(egFull, `2020-01-01T00:00:00Z`, `2020-02-29t23:59:60.123456789-08:00`, 1),
			want: strings.Replace(head, `2020-01-01T00:00:00Z`, `2020-02-29t23:59:60.123456789-08:00`, 1) + `,"data":{"a":1}` + tail},

		{name: "ExactAndFoldedNames", code: eventgrid.EInvalidJSON,
			in:  `{"ID":"upper","id":"1","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1.0"}`,
			msg: `event at index 0: member name "id" appears more than once in its object`},
		{name: "TwoFoldedNames", code: eventgrid.EInvalidJSON,
			in:  `{"ID":"1","Id":"2","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1.0"}`,
			msg: `event at index 0: member name "Id" appears more than once in its object`},
		{name: "DuplicateInData", code: eventgrid.EInvalidJSON,
			in:  strings.Replace(egFull, `{"a":1}`, `{"amount":5,"amount":99999}`, 1),
			msg: `event at index 0: member name "data.amount" appears more than once in its object; member names must be unique, compared ignoring case (RFC 7493 §2.3)`},
		{name: "DuplicateDeepInData", code: eventgrid.EInvalidJSON,
			in:  strings.Replace(egFull, `{"a":1}`, `{"a":[{"b":{"role":"viewer","ROLE":"admin"}}]}`, 1),
			msg: `event at index 0: member name "data.a[0].b.ROLE" appears more than once`},
		{name: "InvalidUTF8", code: eventgrid.EInvalidJSON,
			in:  strings.Replace(egFull, `{"a":1}`, "{\"a\":\"\xff\"}", 1),
			msg: `event at index 0: "data.a" is not valid UTF-8 (at byte offset `},
		{name: "InvalidUTF8InName", code: eventgrid.EInvalidJSON,
			in:  strings.Replace(egFull, `{"a":1}`, "{\"\xc3\x28\":1}", 1),
			msg: `event at index 0: a member name in "data" is not valid UTF-8`},
		{name: "LoneSurrogate", code: eventgrid.EInvalidJSON,
			in:  strings.Replace(egFull, `"subject":"s"`, `"subject":"\ud800"`, 1),
			msg: `event at index 0: "subject" holds an unpaired UTF-16 surrogate escape`},
		{name: "IDEmpty", in: strings.Replace(egFull, `"id":"1"`, `"id":""`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "id" must not be empty`},
		{name: "EventTypeEmpty", in: strings.Replace(egFull, `"eventType":"et"`, `"eventType":""`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "eventType" must not be empty`},
		{name: "EventTimeNotATime", in: strings.Replace(egFull, `2020-01-01T00:00:00Z`, `notatime`, 1), code: eventgrid.EInvalidEvent,
			msg: `event at index 0: "eventTime" must be an RFC 3339 timestamp, not "notatime"`},
		{name: "EventTimeOutOfRange", in: strings.Replace(egFull, `2020-01-01T00:00:00Z`, `2026-13-45T99:00:00Z`, 1), code: eventgrid.EInvalidEvent,
			msg: `event at index 0: "eventTime" must be an RFC 3339 timestamp, not "2026-13-45T99:00:00Z"`},
		{name: "EventTimeEmpty", in: strings.Replace(egFull, `"2020-01-01T00:00:00Z"`, `""`, 1), code: eventgrid.EInvalidEvent,
			msg: `event at index 0: "eventTime" must be an RFC 3339 timestamp, not ""`},
		{name: "IDMissing", in: strings.Replace(egFull, `"id":"1",`, "", 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "id" is required`},
		{name: "IDNull", in: strings.Replace(egFull, `"id":"1",`, `"id":null,`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "id" is required`},
		{name: "SubjectMissing", in: strings.Replace(egFull, `"subject":"s",`, "", 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "subject" is required`},
		{name: "EventTypeMissing", in: strings.Replace(egFull, `"eventType":"et",`, "", 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "eventType" is required`},
		{name: "EventTimeMissing", in: strings.Replace(egFull, `"eventTime":"2020-01-01T00:00:00Z",`, "", 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "eventTime" is required`},
		{name: "DataVersionMissing", in: strings.Replace(egFull, `,"dataVersion":"1.0"`, "", 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "dataVersion" is required`},
		{name: "IDNumber", in: strings.Replace(egFull, `"id":"1"`, `"id":1`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "id" must be a string`},
		{name: "SubjectObject", in: strings.Replace(egFull, `"subject":"s"`, `"subject":{}`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "subject" must be a string`},
		{name: "EventTypeArray", in: strings.Replace(egFull, `"eventType":"et"`, `"eventType":["et"]`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "eventType" must be a string`},
		{name: "EventTimeNumber", in: strings.Replace(egFull, `"2020-01-01T00:00:00Z"`, `1577836800`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "eventTime" must be a string`},
		{name: "DataVersionBool", in: strings.Replace(egFull, `"dataVersion":"1.0"`, `"DataVersion":true`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "dataVersion" must be a string`},
		{name: "TopicMismatch", in: strings.Replace(egFull, `{"id":"1",`, `{"id":"1","topic":"x",`, 1), code: eventgrid.EInvalidEvent,
			msg: `event at index 0: "topic" is "x" but the request is for topic "t1"`},
		{name: "TopicResourcePath", in: strings.Replace(egFull, `{"id":"1",`, `{"id":"1","topic":"/subscriptions/a/topics/t1",`, 1), code: eventgrid.EInvalidEvent,
			msg: `"topic" is "/subscriptions/a/topics/t1" but`},
		{name: "TopicNumber", in: strings.Replace(egFull, `{"id":"1",`, `{"id":"1","topic":1,`, 1), code: eventgrid.EInvalidEvent, msg: `event at index 0: "topic" must be a string`},
		{name: "MetadataVersion2", in: strings.Replace(egFull, `{"id":"1",`, `{"id":"1","metadataVersion":"2",`, 1), code: eventgrid.EInvalidEvent,
			msg: `event at index 0: "metadataVersion" must be "1"`},
		{name: "MetadataVersionNumber", in: strings.Replace(egFull, `{"id":"1",`, `{"id":"1","metadataVersion":1,`, 1), code: eventgrid.EInvalidEvent,
			msg: `event at index 0: "metadataVersion" must be "1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := schema.DecodeBatch(eventgrid.EventGridSchema, "t1", []byte("["+tt.in+"]"), accepted)
			if tt.code != "" {
				MustFail(t, err, tt.code, tt.msg)
				if evs != nil {
					t.Fatalf("events = %v, want none", evs)
				}
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

func TestDecodeBatch_EventGridSchemaFields(t *testing.T) {
	evs := MustDecodeBatch(t, eventgrid.EventGridSchema,
		`[`+egFull+`, {"Id":"a\"b","Subject":"\/x","EventType":"t2","EventTime":"2020-01-01T00:00:00Z","DataVersion":"v\u00e9"}]`)
	want := []eventgrid.Event{
		{ID: "1", Type: "et", Subject: "s", HasSubject: true, DataVersion: "1.0"},
		{ID: `a"b`, Type: "t2", Subject: "/x", HasSubject: true, DataVersion: "vé"},
	}
	if len(evs) != len(want) {
		t.Fatalf("got %d events, want %d", len(evs), len(want))
	}
	for i, w := range want {
		ev := evs[i]
		if ev.ID != w.ID || ev.Type != w.Type || ev.Subject != w.Subject || ev.HasSubject != w.HasSubject || ev.DataVersion != w.DataVersion {
			t.Errorf("event %d = %+v, want %+v", i, *ev, w)
		}
	}
}

func TestDecodeBatch_TopicArgumentKept(t *testing.T) {
	evs, err := schema.DecodeBatch(eventgrid.EventGridSchema, "MyTopic", []byte(`[{"topic":"mytopic","id":"1","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1"}]`), accepted)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"1","topic":"MyTopic","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1","metadataVersion":"1"}`
	if string(evs[0].Body) != want {
		t.Fatalf("Body = %s, want %s", evs[0].Body, want)
	}
}

func TestDecodeBatch_Shape(t *testing.T) {
	tests := []struct {
		name   string
		schema eventgrid.InputSchema
		body   string
		code   string
		msg    string
	}{
		{"Empty", eventgrid.EventGridSchema, ``, eventgrid.EInvalidJSON, "the request body is not valid JSON"},
		// The byte offset follows what was expected, as the line and column
		// lead: the same words as every body's mistake.
		{"Truncated", eventgrid.EventGridSchema, `[{"id":"1"`, eventgrid.EInvalidJSON,
			"line 1, column 10: unexpected end of JSON input; expected more: the text ends before its value does (a closing '}', ']' or '\"' may be missing) (at byte offset 10)"},
		{"TrailingGarbage", eventgrid.CustomEventSchema, `[{}] x`, eventgrid.EInvalidJSON, "at byte offset 5"},
		{"Position", eventgrid.CustomEventSchema, "[\n  {\"a\": *456}\n]", eventgrid.EInvalidJSON,
			"the request body is not valid JSON: line 2, column 9: invalid character '*' looking for beginning of value; " +
				"expected a value; a number is written with digits only, without '*': 456 (at byte offset 10)"},
		{"Object", eventgrid.EventGridSchema, egFull, eventgrid.EInvalidJSON, "must be a JSON array of events, not an object"},
		{"String", eventgrid.CustomEventSchema, `"x"`, eventgrid.EInvalidJSON, "must be a JSON array of events, not a string"},
		{"ElementNumber", eventgrid.EventGridSchema, `[` + egFull + `,1]`, eventgrid.EInvalidJSON, "event at index 1 must be a JSON object, not a number"},
		{"ElementArray", eventgrid.CustomEventSchema, `[{},{},[]]`, eventgrid.EInvalidJSON, "event at index 2 must be a JSON object, not an array"},
		{"ElementNull", eventgrid.CloudEventSchemaV1_0, `[null]`, eventgrid.EInvalidJSON, "event at index 0 must be a JSON object, not null"},
		{"SecondEventBad", eventgrid.EventGridSchema, `[` + egFull + `,{"id":"2"}]`, eventgrid.EInvalidEvent, `event at index 1: "subject" is required`},
		{"UnknownSchema", "Avro", `[]`, eventgrid.EInvalidSchema, `"Avro"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := schema.DecodeBatch(tt.schema, "t1", []byte(tt.body), accepted)
			MustFail(t, err, tt.code, tt.msg)
			if evs != nil {
				t.Fatalf("events = %v, want none", evs)
			}
		})
	}
}

func TestDecodeBatch_EmptyArray(t *testing.T) {
	for _, s := range []eventgrid.InputSchema{eventgrid.EventGridSchema, eventgrid.CustomEventSchema, eventgrid.CloudEventSchemaV1_0} {
		t.Run(string(s), func(t *testing.T) {
			if evs := MustDecodeBatch(t, s, " [ ] "); len(evs) != 0 {
				t.Fatalf("got %d events, want 0", len(evs))
			}
		})
	}
}

func TestDecodeBatch_OversizeEvent(t *testing.T) {
	big := `"` + strings.Repeat("x", eventgrid.MaxEventSize) + `"`
	tests := []struct {
		name   string
		schema eventgrid.InputSchema
		good   string
		big    string
	}{
		{"EventGridSchema", eventgrid.EventGridSchema, egFull, strings.Replace(egFull, `{"a":1}`, big, 1)},
		{"CustomEventSchema", eventgrid.CustomEventSchema, `{}`, `{"a":` + big + `}`},
		{"CloudEventSchemaV1_0", eventgrid.CloudEventSchemaV1_0, ceFull, strings.Replace(ceFull, `{"a":1}`, big, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := schema.DecodeBatch(tt.schema, "t1", []byte(`[`+tt.good+`,`+tt.big+`]`), accepted)
			MustFail(t, err, eventgrid.EPayloadTooLarge, "event at index 1 is ", "over the limit of 1048576 bytes")
			if evs != nil {
				t.Fatal("events returned with the error")
			}
		})
	}
}

func TestDecodeBatch_JustUnderLimit(t *testing.T) {
	// A custom event of exactly MaxEventSize bytes is accepted.
	ev := `{"a":"` + strings.Repeat("x", eventgrid.MaxEventSize-8) + `"}`
	evs := MustDecodeBatch(t, eventgrid.CustomEventSchema, "["+ev+"]")
	if len(evs[0].Body) != eventgrid.MaxEventSize {
		t.Fatalf("len(Body) = %d", len(evs[0].Body))
	}
}

func TestDecodeOne(t *testing.T) {
	egNoID := strings.Replace(egFull, `"id":"1",`, "", 1)
	ceNoID := strings.Replace(ceFull, `"id":"1",`, "", 1)
	tests := []struct {
		name      string
		schema    eventgrid.InputSchema
		body      string
		defaultID string
		wantID    string
		code      string
		msg       string
	}{
		{"EGBodyID", eventgrid.EventGridSchema, egFull, "", "1", "", ""},
		{"EGDefaultID", eventgrid.EventGridSchema, egNoID, "e\"7", `e"7`, "", ""},
		{"EGSameID", eventgrid.EventGridSchema, egFull, "1", "1", "", ""},
		{"EGEscapedSameID", eventgrid.EventGridSchema, strings.Replace(egFull, `"id":"1"`, `"id":"\u0031"`, 1), "1", "1", "", ""},
		{"EGDifferentID", eventgrid.EventGridSchema, egFull, "2", "", eventgrid.EInvalidEvent, `event at index 0: "id" is "1" but the request is for event id "2"`},
		{"EGNoID", eventgrid.EventGridSchema, egNoID, "", "", eventgrid.EInvalidEvent, `event at index 0: "id" is required`},
		{"EGArray", eventgrid.EventGridSchema, "[" + egFull + "]", "", "", eventgrid.EInvalidJSON, "must be a single JSON object, not an array"},
		{"EGInvalidJSON", eventgrid.EventGridSchema, "{", "", "", eventgrid.EInvalidJSON, "not valid JSON"},
		{"CEBodyID", eventgrid.CloudEventSchemaV1_0, ceFull, "", "1", "", ""},
		{"CEDefaultID", eventgrid.CloudEventSchemaV1_0, ceNoID, "x", "x", "", ""},
		{"CEDifferentID", eventgrid.CloudEventSchemaV1_0, ceFull, "x", "", eventgrid.EInvalidEvent, `"id" is "1" but the request is for event id "x"`},
		{"CENoID", eventgrid.CloudEventSchemaV1_0, ceNoID, "", "", eventgrid.EInvalidEvent, `event at index 0: "id" is required`},
		{"CustomIgnoresDefaultID", eventgrid.CustomEventSchema, ` {"id":"1"} `, "2", "", "", ""},
		{"CustomArray", eventgrid.CustomEventSchema, `[{}]`, "", "", eventgrid.EInvalidJSON, "must be a single JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := schema.DecodeOne(tt.schema, "t1", []byte(tt.body), tt.defaultID, accepted)
			if tt.code != "" {
				MustFail(t, err, tt.code, tt.msg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			MustBeValidEvents(t, []*eventgrid.Event{ev})
			if ev.ID != tt.wantID {
				t.Fatalf("ID = %q, want %q", ev.ID, tt.wantID)
			}
			if tt.schema == eventgrid.CustomEventSchema && string(ev.Body) != `{"id":"1"}` {
				t.Fatalf("Body = %s", ev.Body)
			}
		})
	}
}

func TestDecodeOne_DefaultIDInBody(t *testing.T) {
	body := strings.Replace(egFull, `"id":"1",`, "", 1)
	ev, err := schema.DecodeOne(eventgrid.EventGridSchema, "t1", []byte(body), "ab\\c", accepted)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"id":"ab\\c","topic":"t1","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","data":{"a":1},"dataVersion":"1.0","metadataVersion":"1"}`
	if string(ev.Body) != want {
		t.Fatalf("Body = %s, want %s", ev.Body, want)
	}
}

func TestDecodeOne_DefaultIDNotUTF8(t *testing.T) {
	body := []byte(`{"subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1"}`)
	for _, s := range []eventgrid.InputSchema{eventgrid.EventGridSchema, eventgrid.CloudEventSchemaV1_0} {
		_, err := schema.DecodeOne(s, "t1", body, "a\xff", accepted)
		MustFail(t, err, eventgrid.EInvalidEvent, `event at index 0: "id" given by the URL is not valid UTF-8`)
	}
	_, err := schema.DecodeBinary(binaryHeader(), nil, "a\xff", accepted)
	MustFail(t, err, eventgrid.EInvalidEvent, `"id" given by the URL is not valid UTF-8`)
}
