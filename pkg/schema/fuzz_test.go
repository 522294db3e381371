package schema_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

var fuzzSchemas = []eventgrid.InputSchema{eventgrid.EventGridSchema, eventgrid.CustomEventSchema, eventgrid.CloudEventSchemaV1_0}

// FuzzDecodeBatch decodes arbitrary bodies for each schema (chosen by
// which): it must never panic, and what it accepts must be valid JSON in
// canonical form, a fixed point of decoding.
func FuzzDecodeBatch(f *testing.F) {
	for i, body := range []string{
		`[` + egFull + `]`,
		`[{"Id":"1","Topic":"T1","Subject":"s","EventType":"et","EventTime":"x","Data":null,"DataVersion":"1","MetadataVersion":"1"}]`,
		`[{"id":"\u0031","subject":"\"","eventType":"","eventTime":"","dataVersion":"","data":[1,{"a":"b"}]}]`,
		`[ { "z" : 1 } , {} ]`,
		`[` + ceFull + `]`,
		`[{"specversion":"1.0","id":"1","source":"/s","type":"t","datacontenttype":"Application/JSON","data":{"a":1}}]`,
		`[{"specVersion":"1.0-rc1","ID":"1","source":"s","type":"t","time":"2020-02-29T23:59:60.1+01:00","Ext":1,"ext":"x","data_base64":"QQ=="}]`,
		`[{"specversion":"1.0","id":" a","source":"http://u@[::1]:80/a%20b?c#d","type":"t","subject":"\u00e9","datacontenttype":"text/plain; charset=\"utf-8\"",` +
			`"dataschema":"urn:x:y","sampledrate":5,"ext":true,"expirytime":"2030-01-01T00:00:00Z","data":"x"}]`,
		`[]`, `{}`, `[1]`, ``,
	} {
		for s := range fuzzSchemas {
			f.Add(uint8(s+i), []byte(body))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		s := fuzzSchemas[int(which)%len(fuzzSchemas)]
		evs, err := schema.DecodeBatch(s, "t1", body, accepted)
		checkFolded(t, s, body, evs, err)
		if err != nil {
			if evs != nil {
				t.Fatal("events returned with an error")
			}
			if c := eventgrid.ErrorCode(err); c == eventgrid.EInternal {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		for _, ev := range evs {
			checkFuzzedEvent(t, s, ev)
		}
		checkBuiltConverted(t, s, body, evs)
	})
}

// checkFolded decodes body, which gave evs or err, again with
// FoldExtensionNames set: what it accepts is valid, and it accepts
// everything accepted without it, unchanged.
func checkFolded(t *testing.T, s eventgrid.InputSchema, body []byte, evs []*eventgrid.Event, err error) {
	t.Helper()
	folded, ferr := (&schema.Scratch{FoldExtensionNames: true}).DecodeBatch(s, "t1", body, accepted)
	if ferr != nil {
		if err == nil {
			t.Fatalf("with FoldExtensionNames: %v; without, accepted", ferr)
		}
		return
	}
	for i, ev := range folded {
		checkFuzzedEvent(t, s, ev)
		if err == nil && !bytes.Equal(ev.Body, evs[i].Body) {
			t.Fatalf("event %d with FoldExtensionNames:\n%s\nwant\n%s", i, ev.Body, evs[i].Body)
		}
	}
}

// checkBuiltConverted decodes body, whose events of schema s are evs, again
// with ToCloudEvents set: every event it builds as its CloudEvent must be
// what converting its event of evs gives, with the same fields, and every
// other event the same as in evs.
func checkBuiltConverted(t *testing.T, s eventgrid.InputSchema, body []byte, evs []*eventgrid.Event) {
	t.Helper()
	conv, err := (&schema.Scratch{ToCloudEvents: true}).DecodeBatch(s, "t1", body, accepted)
	if err != nil || len(conv) != len(evs) {
		t.Fatalf("with ToCloudEvents: %d events, %v; want %d", len(conv), err, len(evs))
	}
	for i, c := range conv {
		ev := evs[i]
		want := ev.Body
		if c.Converted {
			if s != eventgrid.EventGridSchema {
				t.Fatalf("event %d of schema %s built as its CloudEvent", i, s)
			}
			want, err = schema.CloudEventOf(ev)
			if err != nil {
				t.Fatalf("event %d built as its CloudEvent, whose conversion fails: %v", i, err)
			}
		}
		if !bytes.Equal(c.Body, want) {
			t.Fatalf("event %d with ToCloudEvents (converted: %v):\n%s\nwant\n%s", i, c.Converted, c.Body, want)
		}
		if c.ID != ev.ID || c.Type != ev.Type || c.Subject != ev.Subject || c.HasSubject != ev.HasSubject ||
			c.DataVersion != ev.DataVersion || !c.Accepted.Equal(ev.Accepted) {
			t.Fatalf("event %d with ToCloudEvents has fields %+v; want %+v", i, c, ev)
		}
	}
}

// FuzzDecodeBinary decodes arbitrary binary-mode requests, headers given as
// "name: value" lines: it must never panic, and what it accepts must be a
// valid canonical CloudEvent.
func FuzzDecodeBinary(f *testing.F) {
	const minimal = "ce-specversion: 1.0\nce-id: 1\nce-source: /src\nce-type: t\n"
	f.Add(minimal+"Content-Type: application/json", []byte(` {"a":1} `), "")
	f.Add(minimal+"Content-Type: text/plain; charset=utf-8", []byte("héllo\n"), "")
	f.Add(minimal+"Content-Type: application/octet-stream", []byte{0, 1, 0xff}, "")
	f.Add(minimal+"ce-subject: Euro%20%E2%82%AC\nCE-Ext: \"a \\\"b\\\"\"\nce-time: 2020-01-01T00:00:00Z", []byte(nil), "")
	f.Add("ce-specversion: 1.0\nce-source: s\nce-type: t", []byte("x"), "d1")
	f.Add(minimal+"Content-Type: text/plain; a=\"b\"\nce-dataschema: https://h:1/%C3%A9#x\nce-sampledrate: -5\nce-dataref: //h/x", []byte("y"), "")
	f.Add(minimal+"Content-Type: applicaTion/json", []byte(`{"a":1}`), "")
	f.Add("ce-specversion: 1.0\nce-id: 0\nce-source: #\nce-type: 0", []byte("0"), "")
	f.Fuzz(func(t *testing.T, headers string, body []byte, defaultID string) {
		h := http.Header{}
		for _, line := range strings.Split(headers, "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok {
				h[name] = append(h[name], strings.TrimSpace(value))
			}
		}
		ev, err := schema.DecodeBinary(h, body, defaultID, accepted)
		if err != nil {
			if ev != nil {
				t.Fatal("event returned with an error")
			}
			return
		}
		checkFuzzedEvent(t, eventgrid.CloudEventSchemaV1_0, ev)
	})
}

// checkFuzzedEvent checks an accepted event: its Body is valid JSON and, for
// the schemas with a canonical form, decoding [Body] again gives the same
// Body and fields.
func checkFuzzedEvent(t *testing.T, s eventgrid.InputSchema, ev *eventgrid.Event) {
	t.Helper()
	if !json.Valid(ev.Body) {
		t.Fatalf("Body is not valid JSON: %q", ev.Body)
	}
	if _, err := rawjson.ValidStrict(ev.Body); err != nil {
		t.Fatalf("Body is not I-JSON (%v): %q", err, ev.Body)
	}
	if len(ev.Body) > eventgrid.MaxEventSize {
		t.Fatalf("Body is %d bytes", len(ev.Body))
	}
	switch s {
	case eventgrid.CustomEventSchema:
		return
	case eventgrid.CloudEventSchemaV1_0:
		mustReadWithSDK(t, ev.Body)
	case eventgrid.EventGridSchema:
		ce, err := schema.EventGridToCloudEvent(ev.Body)
		if err != nil {
			t.Fatalf("accepted event %q does not convert: %v", ev.Body, err)
		}
		if of, err := schema.CloudEventOf(ev); err != nil || !bytes.Equal(of, ce) {
			t.Fatalf("CloudEventOf(%q) = %q, %v; scanning gives %q", ev.Body, of, err, ce)
		}
		if ev.DataAt > 0 && !schema.HasCanonicalLayout(ev.Body, int(ev.DataAt)) {
			t.Fatalf("CloudEventOf scans the decoder's body %q (data at %d)", ev.Body, ev.DataAt)
		}
		if ev.Plain && !schema.HasPlainLayout(ev) {
			t.Fatalf("CloudEventOf scans the decoder's plain body %q", ev.Body)
		}
		// An id or eventType of white space is kept: valid by the
		// CloudEvents specification, if refused at a CloudEvents topic and
		// by the Go SDK, which trims both (docs/design.md, "Schema
		// conversion"). The SDK reads the rest of the event.
		if _, err := schema.DecodeOne(eventgrid.CloudEventSchemaV1_0, "t1", ce, "", accepted); err != nil &&
			!strings.Contains(err.Error(), "must not be only white space") {
			t.Fatalf("converted event %q breaks a CloudEvents rule: %v", ce, err)
		}
		mustReadWithSDK(t, withBlankNamed(t, ce))
	}
	again, err := schema.DecodeBatch(s, "t1", append(append([]byte("["), ev.Body...), ']'), accepted)
	if err != nil {
		t.Fatalf("canonical Body %q does not decode: %v", ev.Body, err)
	}
	if len(again) != 1 || !bytes.Equal(again[0].Body, ev.Body) {
		t.Fatalf("canonical form is not a fixed point:\n%q\n%q", ev.Body, again[0].Body)
	}
	if a := again[0]; a.ID != ev.ID || a.Type != ev.Type || a.Subject != ev.Subject || a.HasSubject != ev.HasSubject || a.DataVersion != ev.DataVersion {
		t.Fatalf("fields changed on re-decoding: %+v, then %+v", *ev, *a)
	}
	if !utf8.Valid(ev.Body) {
		return // encoding/json would replace the invalid bytes
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(ev.Body))
	dec.UseNumber() // numbers beyond float64 are valid JSON
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	typeKey := "type"
	if s == eventgrid.EventGridSchema {
		typeKey = "eventType"
	}
	if m["id"] != ev.ID || m[typeKey] != ev.Type {
		t.Fatalf("ID, Type = %q, %q; Body has %q, %q", ev.ID, ev.Type, m["id"], m[typeKey])
	}
	if subject, ok := m["subject"]; ok != ev.HasSubject || (ok && subject != ev.Subject) {
		t.Fatalf("Subject = %q, %v; Body has %v", ev.Subject, ev.HasSubject, subject)
	}
}

// withBlankNamed returns the CloudEvent ce with an id or type of only white
// space replaced by "blank", which the Go SDK would read as missing.
func withBlankNamed(t *testing.T, ce []byte) []byte {
	t.Helper()
	for _, name := range []string{"id", "type"} {
		v, ok := rawjson.Member(ce, name)
		var s string
		if !ok || json.Unmarshal(v, &s) != nil || strings.TrimSpace(s) != "" {
			continue
		}
		rest := without(ce, name)
		ce = append(rest[:len(rest)-1], `,"`+name+`":"blank"}`...)
	}
	return ce
}

// mustReadWithSDK fails t unless the CloudEvents Go SDK, as a receiver,
// reads body and finds it valid: what the broker accepts, receivers take.
func mustReadWithSDK(t *testing.T, body []byte) {
	t.Helper()
	// The SDK reads data as JSON only under application/json and
	// text/json written exactly so, not under the other JSON media types of
	// the JSON format (§3.1.1), nor in other letter case or with white
	// space before a missing ";" (media types ignore case, RFC 2045 §5.1),
	// which the broker follows: for those, it reads the event without its
	// data.
	if ct, ok := rawjson.Member(body, "datacontenttype"); ok {
		sdk, _, params := strings.Cut(strings.Trim(string(ct), `"`), ";")
		if params {
			sdk = strings.TrimSpace(sdk)
		}
		mt := strings.ToLower(strings.TrimSpace(sdk))
		if _, sub, _ := strings.Cut(mt, "/"); strings.HasSuffix(sub, "+json") || (sub == "json" && sdk != "application/json" && sdk != "text/json") {
			body = without(body, "data")
		}
	}
	// Nor does it read two forms of time that RFC 3339 allows (§5.6): a
	// lower-case t or z, and the leap second 60.
	if tm, ok := rawjson.Member(body, "time"); ok && (bytes.ContainsAny(tm, "tz") || bytes.Contains(tm, []byte(":60"))) {
		body = without(body, "time")
	}
	// Nor does it hold a source of a lone "#", a URI reference (RFC 3986
	// §4.1) that Go's url.Parse reads as the empty URL: it reads the event
	// with another source.
	if src, ok := rawjson.Member(body, "source"); ok {
		var s string
		if json.Unmarshal(src, &s) == nil {
			if u, err := url.Parse(s); err == nil && u.String() == "" {
				rest := without(body, "source") // still holds id and type
				body = append(rest[:len(rest)-1], `,"source":"/"}`...)
			}
		}
	}
	var ev event.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatalf("the CloudEvents SDK cannot read %q: %v", body, err)
	}
	if err := ev.Validate(); err != nil {
		t.Fatalf("the CloudEvents SDK finds %q invalid: %v", body, err)
	}
}

// without returns the JSON object body without its member name.
func without(body []byte, name string) []byte {
	out := []byte{'{'}
	rawjson.ObjectEach(body, func(k, v []byte) bool {
		if string(k) != name {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(append(append(append(out, '"'), k...), '"', ':'), v...)
		}
		return true
	})
	return append(out, '}')
}
