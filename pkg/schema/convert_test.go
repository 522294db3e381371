package schema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

func TestConverts(t *testing.T) {
	all := []eventgrid.InputSchema{eventgrid.EventGridSchema, eventgrid.CustomEventSchema, eventgrid.CloudEventSchemaV1_0}
	for _, from := range all {
		for _, to := range all {
			want := from == eventgrid.EventGridSchema && to == eventgrid.CloudEventSchemaV1_0
			if got := schema.Converts(from, to); got != want {
				t.Errorf("Converts(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestEventGridToCloudEvent(t *testing.T) {
	tests := []struct {
		name  string
		in    string // an EventGridSchema event as published to topic t1
		want  string
		plain bool // every string member printable ASCII without escapes
	}{
		{
			"AllMembers",
			`{"id":"e1","subject":"/a/b","eventType":"Contoso.Item","eventTime":"2024-05-06T07:08:09.123Z","data":{"n":1,"s":"x"},"dataVersion":"2.0"}`,
			`{"specversion":"1.0","id":"e1","source":"t1","type":"Contoso.Item","subject":"/a/b","time":"2024-05-06T07:08:09.123Z","datacontenttype":"application/json","dataversion":"2.0","data":{"n":1,"s":"x"}}`,
			true,
		},
		{
			"NoData",
			`{"id":"e1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","dataVersion":"1"}`,
			`{"specversion":"1.0","id":"e1","source":"t1","type":"T","subject":"s","time":"2024-05-06T07:08:09Z","dataversion":"1"}`,
			true,
		},
		{
			"NullData",
			`{"id":"e1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":null,"dataVersion":"1"}`,
			`{"specversion":"1.0","id":"e1","source":"t1","type":"T","subject":"s","time":"2024-05-06T07:08:09Z","datacontenttype":"application/json","dataversion":"1","data":null}`,
			true,
		},
		{
			"StringAndArrayData",
			`{"id":"e1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":["a",{"b":"c"}],"dataVersion":"1"}`,
			`{"specversion":"1.0","id":"e1","source":"t1","type":"T","subject":"s","time":"2024-05-06T07:08:09Z","datacontenttype":"application/json","dataversion":"1","data":["a",{"b":"c"}]}`,
			true,
		},
		{
			"EmptySubjectAndDataVersionLeftOut",
			`{"id":"e1","subject":"","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":1,"dataVersion":""}`,
			`{"specversion":"1.0","id":"e1","source":"t1","type":"T","time":"2024-05-06T07:08:09Z","datacontenttype":"application/json","data":1}`,
			true,
		},
		{
			"SpacesSubjectAndDataVersionLeftOut",
			`{"id":"e1","subject":"  ","eventType":"T","eventTime":"2024-05-06T07:08:09Z","dataVersion":" "}`,
			`{"specversion":"1.0","id":"e1","source":"t1","type":"T","time":"2024-05-06T07:08:09Z"}`,
			true,
		},
		{
			"BlankSubjectAndDataVersionLeftOut",
			`{"id":"e1","subject":" \u00a0","eventType":"T","eventTime":"2024-05-06T07:08:09Z","dataVersion":"  "}`,
			`{"specversion":"1.0","id":"e1","source":"t1","type":"T","time":"2024-05-06T07:08:09Z"}`,
			false,
		},
		{
			// EventGridSchema allows what a CloudEvents String does not.
			"ControlCharactersAndNoncharactersReplaced",
			`{"id":"e\u0000","subject":"a\nb","eventType":"T\u0085","eventTime":"2024-05-06T07:08:09Z","dataVersion":"\uFFFF1","data":"\u0001"}`,
			`{"specversion":"1.0","id":"e�","source":"t1","type":"T�","subject":"a�b","time":"2024-05-06T07:08:09Z","datacontenttype":"application/json","dataversion":"�1","data":"\u0001"}`,
			false,
		},
		{
			// data may hold the text of the key after it; a string cannot
			// hold a bare quote, so dataVersion's may hold it escaped.
			"KeyTextInDataAndDataVersion",
			`{"id":"e1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":{"x":",\"dataVersion\":","dataVersion":{"dataVersion":"2"}},"dataVersion":"1\",\"dataVersion\":\"3"}`,
			`{"specversion":"1.0","id":"e1","source":"t1","type":"T","subject":"s","time":"2024-05-06T07:08:09Z","datacontenttype":"application/json","dataversion":"1\",\"dataVersion\":\"3","data":{"x":",\"dataVersion\":","dataVersion":{"dataVersion":"2"}}}`,
			false,
		},
		{
			"EscapesKept",
			`{"id":"e\"1","subject":"caf\u00e9","eventType":"T\\x","eventTime":"2024-05-06T07:08:09+02:00","data":"line\nbreak","dataVersion":"1"}`,
			`{"specversion":"1.0","id":"e\"1","source":"t1","type":"T\\x","subject":"caf\u00e9","time":"2024-05-06T07:08:09+02:00","datacontenttype":"application/json","dataversion":"1","data":"line\nbreak"}`,
			false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eg := MustDecodeBatch(t, eventgrid.EventGridSchema, `[`+tt.in+`]`)[0]
			got, err := schema.EventGridToCloudEvent(eg.Body)
			if err != nil {
				t.Fatalf("EventGridToCloudEvent: %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			// CloudEventOf reads the decoder's layout instead of scanning,
			// to the same result: by the members' lengths when they are
			// plain.
			if eg.Plain != tt.plain || schema.HasPlainLayout(eg) != tt.plain {
				t.Errorf("Plain = %v, with the layout %v; want %v", eg.Plain, schema.HasPlainLayout(eg), tt.plain)
			}
			if eg.DataAt > 0 && !schema.HasCanonicalLayout(eg.Body, int(eg.DataAt)) {
				t.Errorf("CloudEventOf would scan the decoder's body %s (data at %d)", eg.Body, eg.DataAt)
			}
			if of, err := schema.CloudEventOf(eg); err != nil || string(of) != tt.want {
				t.Fatalf("CloudEventOf = %s, %v\nwant %s", of, err, tt.want)
			}
			// A topic whose subscriptions all take CloudEvents has a
			// plain event built as its CloudEvent, with the same fields;
			// any other is built as published.
			conv := MustDecodeConverted(t, `[`+tt.in+`]`)[0]
			if conv.Converted != tt.plain {
				t.Errorf("built as its CloudEvent: %v; want %v", conv.Converted, tt.plain)
			}
			if wantBody := map[bool]string{true: tt.want, false: string(eg.Body)}[conv.Converted]; string(conv.Body) != wantBody {
				t.Errorf("built with ToCloudEvents:\n%s\nwant\n%s", conv.Body, wantBody)
			}
			if conv.ID != eg.ID || conv.Type != eg.Type || conv.Subject != eg.Subject || conv.DataVersion != eg.DataVersion || !conv.HasSubject {
				t.Errorf("built with ToCloudEvents, fields %q %q %q %q; want %q %q %q %q",
					conv.ID, conv.Type, conv.Subject, conv.DataVersion, eg.ID, eg.Type, eg.Subject, eg.DataVersion)
			}
			if of, err := schema.CloudEventOf(conv); err != nil || string(of) != tt.want {
				t.Errorf("CloudEventOf the event built with ToCloudEvents = %s, %v", of, err)
			}
			// The result is a canonical CloudEvent: decoding it as one
			// gives it back unchanged.
			ce, err := schema.DecodeOne(eventgrid.CloudEventSchemaV1_0, "t1", got, "", accepted)
			if err != nil {
				t.Fatalf("the result does not decode as a CloudEvent: %v", err)
			}
			if string(ce.Body) != string(got) {
				t.Fatalf("not canonical: decoding gives\n%s", ce.Body)
			}
		})
	}
}

func TestEventGridToCloudEvent_NotConvertible(t *testing.T) {
	for _, in := range []string{
		`[1]`,
		`not json`,
		`{"topic":"t1","eventType":"T"}`,
		`{"id":"","topic":"t1","eventType":"T"}`,
		`{"id":"1","eventType":"T"}`,
		`{"id":"1","topic":"t1","eventType":""}`,
		`{"id":1,"topic":"t1","eventType":"T"}`,
	} {
		if _, err := schema.EventGridToCloudEvent([]byte(in)); !errors.Is(err, schema.ErrNotConvertible) {
			t.Errorf("EventGridToCloudEvent(%s) error = %v, want ErrNotConvertible", in, err)
		}
	}
}

// An event whose DataAt does not fit its Body, as one built elsewhere may
// have, is converted by scanning it.
func TestCloudEventOf_LayoutNotTheDecodersScanned(t *testing.T) {
	// A plain event, so that the conversion by the members' lengths must
	// find the misfit too; one with string data, whose quotes could pass
	// for the end of eventTime.
	stringData := strings.Replace(egFull, `{"a":1}`, `"x"`, 1)
	for _, in := range []string{egFull, stringData} {
		eg := MustDecodeBatch(t, eventgrid.EventGridSchema, `[`+in+`]`)[0]
		if !eg.Plain {
			t.Fatalf("%s is not Plain", in)
		}
		want, err := schema.EventGridToCloudEvent(eg.Body)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range []int32{0, 1, eg.DataAt - 1, eg.DataAt + 1, int32(len(eg.Body)), 1 << 30} {
			ev := *eg
			ev.DataAt = at
			if got, err := schema.CloudEventOf(&ev); err != nil || string(got) != string(want) {
				t.Errorf("DataAt %d: got %s, %v\nwant %s", at, got, err, want)
			}
		}
	}
	for _, body := range []string{
		`{"id":"1","topic":"t1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":1,"dataVersion":"1","metadataVersion":"1"}`,
		`{"id":"1","topic":"t1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":1,"dataVersion":1,"metadataVersion":"1"}`,
		`{"topic":"t1","id":"1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":1,"dataVersion":"1","metadataVersion":"1"}`,
		`{"id":"1","topic":"t1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":1}`,
	} {
		ev := eventgrid.Event{Body: []byte(body), DataAt: int32(strings.Index(body, `"data":`) + len(`"data":`))}
		want, wantErr := schema.EventGridToCloudEvent(ev.Body)
		if got, err := schema.CloudEventOf(&ev); string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: got %s, %v; scanning gives %s, %v", body, got, err, want, wantErr)
		}
	}
}

// AppendCloudEventOf appends to what dst holds, allocates nothing given
// the room, and leaves dst as it was when the event does not convert.
func TestAppendCloudEventOf(t *testing.T) {
	eg := MustDecodeBatch(t, eventgrid.EventGridSchema, `[`+egKB+`]`)[0]
	want, err := schema.CloudEventOf(eg)
	if err != nil {
		t.Fatal(err)
	}
	room := make([]byte, 0, 3+len(eg.Body)+100)
	got, err := schema.AppendCloudEventOf(append(room, "abc"...), eg)
	if err != nil || string(got) != "abc"+string(want) || &got[0] != &room[:1][0] {
		t.Errorf("AppendCloudEventOf = %.40s…, %v; want abc and the event, in dst's room", got, err)
	}
	if n := testing.AllocsPerRun(10, func() { _, _ = schema.AppendCloudEventOf(room[:0], eg) }); n != 0 {
		t.Errorf("AppendCloudEventOf with room allocates %v times", n)
	}
	for _, body := range []string{`[1]`, `{"id":"1","topic":"t1"}`} {
		got, err := schema.AppendCloudEventOf([]byte("abc"), &eventgrid.Event{Body: []byte(body)})
		if !errors.Is(err, schema.ErrNotConvertible) || string(got) != "abc" {
			t.Errorf("AppendCloudEventOf(%s) = %q, %v; want dst and ErrNotConvertible", body, got, err)
		}
	}
}

// egKB is an EventGridSchema event with about 1 KB of data, as the bench
// publishes.
var egKB = `{"id":"1","subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","data":{"pad":"` +
	strings.Repeat("x", 1000) + `","n":[1,2,3]},"dataVersion":"1.0"}`

func BenchmarkCloudEventOf(b *testing.B) {
	eg := MustDecodeBatch(b, eventgrid.EventGridSchema, `[`+egKB+`]`)[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := schema.CloudEventOf(eg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendCloudEventOf is the conversion as publishing does it:
// into room made for it, so that only the conversion is measured.
func BenchmarkAppendCloudEventOf(b *testing.B) {
	eg := MustDecodeBatch(b, eventgrid.EventGridSchema, `[`+egKB+`]`)[0]
	room := make([]byte, 0, len(eg.Body)+128)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := schema.AppendCloudEventOf(room, eg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEventGridToCloudEvent(b *testing.B) {
	eg := MustDecodeBatch(b, eventgrid.EventGridSchema, `[`+egKB+`]`)[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := schema.EventGridToCloudEvent(eg.Body); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEventGridToCloudEvent_TopicThatIsNotAURIReferenceEncoded(t *testing.T) {
	// The decoder sets a topic name, which always is a URI reference, but
	// a body built elsewhere may hold anything.
	got, err := schema.EventGridToCloudEvent([]byte(
		`{"id":"e1","topic":"my topic:7/é","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","dataVersion":"1","metadataVersion":"1"}`))
	const want = `{"specversion":"1.0","id":"e1","source":"my%20topic%3A7/%C3%A9","type":"T","subject":"s","time":"2024-05-06T07:08:09Z","dataversion":"1"}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v; want %s", got, err, want)
	}
	if _, err := schema.DecodeOne(eventgrid.CloudEventSchemaV1_0, "t1", got, "", accepted); err != nil {
		t.Fatalf("the result does not decode as a CloudEvent: %v", err)
	}
}

func TestEventGridToCloudEvent_BlankIDKept(t *testing.T) {
	// EventGridSchema accepts an id of white space; a CloudEvent cannot go
	// without one, and " " is a valid CloudEvents id.
	eg := MustDecodeBatch(t, eventgrid.EventGridSchema,
		`[{"id":" ","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","dataVersion":"1"}]`)[0]
	got, err := schema.EventGridToCloudEvent(eg.Body)
	const want = `{"specversion":"1.0","id":" ","source":"t1","type":"T","subject":"s","time":"2024-05-06T07:08:09Z","dataversion":"1"}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v; want %s", got, err, want)
	}
}

func TestEventGridToCloudEvent_TimeThatIsNotRFC3339LeftOut(t *testing.T) {
	// The decoder refuses such an eventTime, but a body built elsewhere may
	// hold one.
	got, err := schema.EventGridToCloudEvent([]byte(
		`{"id":"e1","topic":"t1","subject":"s","eventType":"T","eventTime":"yesterday","dataVersion":"1","metadataVersion":"1"}`))
	const want = `{"specversion":"1.0","id":"e1","source":"t1","type":"T","subject":"s","dataversion":"1"}`
	if err != nil || string(got) != want {
		t.Fatalf("got %s, %v; want %s", got, err, want)
	}
}

// MustDecodeConverted decodes an EventGridSchema batch for topic t1 with
// ToCloudEvents set.
func MustDecodeConverted(t *testing.T, body string) []*eventgrid.Event {
	t.Helper()
	evs, err := (&schema.Scratch{ToCloudEvents: true}).DecodeBatch(eventgrid.EventGridSchema, "t1", []byte(body), accepted)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// A topic whose name the CloudEvent's source must percent-encode has its
// events built as published, and converted to the same result as ever.
func TestDecode_ToCloudEventsTopicNotASource(t *testing.T) {
	body := []byte(`[{"id":"1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":1,"dataVersion":"1"}]`)
	for _, topic := range []string{"t 1", "t1"} {
		evs, err := (&schema.Scratch{ToCloudEvents: true}).DecodeBatch(eventgrid.EventGridSchema, topic, body, accepted)
		if err != nil {
			t.Fatal(err)
		}
		if want := topic == "t1"; evs[0].Converted != want {
			t.Errorf("topic %q: built as its CloudEvent %v, want %v", topic, evs[0].Converted, want)
		}
		ce, err := schema.CloudEventOf(evs[0])
		if src := `"source":"` + strings.ReplaceAll(topic, " ", "%20") + `"`; err != nil || !strings.Contains(string(ce), src) {
			t.Errorf("topic %q: CloudEventOf = %s, %v; want %s", topic, ce, err, src)
		}
	}
}
