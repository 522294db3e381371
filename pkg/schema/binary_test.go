package schema_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// binaryHeader returns the ce-* headers of a minimal binary-mode CloudEvent
// plus kv, given as name, value pairs set with Header.Add.
func binaryHeader(kv ...string) http.Header {
	h := http.Header{}
	h.Set("ce-specversion", "1.0")
	h.Set("ce-id", "1")
	h.Set("ce-source", "/src")
	h.Set("ce-type", "t")
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "\x00delete" {
			h.Del(kv[i])
			continue
		}
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestDecodeBinary(t *testing.T) {
	const head = `{"specversion":"1.0","id":"1","source":"/src","type":"t"`
	bad := eventgrid.EInvalidEvent
	tests := []struct {
		name      string
		header    http.Header
		body      string
		defaultID string
		want      string
		code      string
		msg       string
	}{
		{name: "JSONObject", header: binaryHeader("Content-Type", "application/json"), body: " {\"a\": [1, 2]}\n",
			want: head + `,"datacontenttype":"application/json","data":{"a": [1, 2]}}`},
		{name: "JSONWithParameters", header: binaryHeader("Content-Type", "Application/JSON; charset=utf-8"), body: `"s"`,
			want: head + `,"datacontenttype":"Application/JSON; charset=utf-8","data":"s"}`},
		{name: "PlusJSON", header: binaryHeader("Content-Type", "application/vnd.example+json"), body: `[true,null]`,
			want: head + `,"datacontenttype":"application/vnd.example+json","data":[true,null]}`},
		{name: "TextJSONSubtype", header: binaryHeader("Content-Type", "text/json"), body: `12.50`,
			want: head + `,"datacontenttype":"text/json","data":12.50}`},
		{name: "JSONEmptyBody", header: binaryHeader("Content-Type", "application/json"), body: ``,
			want: head + `,"datacontenttype":"application/json"}`},
		{name: "JSONInvalid", header: binaryHeader("Content-Type", "application/json"), body: `{"a":`,
			code: eventgrid.EInvalidJSON, msg: "not valid JSON"},
		{name: "JSONDuplicateName", header: binaryHeader("Content-Type", "application/json"), body: `{"amount":5,"amount":99999}`,
			code: eventgrid.EInvalidJSON, msg: `event at index 0: member name "data.amount" appears more than once in its object`},
		{name: "JSONDuplicateNameInArray", header: binaryHeader("Content-Type", "application/json"), body: `[{"a":1},{"b":1,"B":2}]`,
			code: eventgrid.EInvalidJSON, msg: `event at index 0: member name "data[1].B" appears more than once`},
		{name: "JSONNotUTF8", header: binaryHeader("Content-Type", "application/json"), body: "{\"s\":\"\xff\"}",
			code: eventgrid.EInvalidJSON, msg: `event at index 0: "data.s" is not valid UTF-8`},
		{name: "Text", header: binaryHeader("Content-Type", "text/plain; charset=utf-8"), body: "héllo \"w\"\n\x01",
			want: head + `,"datacontenttype":"text/plain; charset=utf-8","data":"héllo \"w\"\n\u0001"}`},
		{name: "NoContentTypeText", header: binaryHeader(), body: `a\b`,
			want: head + `,"data":"a\\b"}`},
		{name: "NoContentTypeBinary", header: binaryHeader(), body: "\xff\x00",
			want: head + `,"data_base64":"/wA="}`},
		{name: "TextNotUTF8", header: binaryHeader("Content-Type", "text/plain"), body: "\xc0\xa0",
			want: head + `,"datacontenttype":"text/plain","data_base64":"wKA="}`},
		{name: "OctetStream", header: binaryHeader("Content-Type", "application/octet-stream"), body: "abc",
			want: head + `,"datacontenttype":"application/octet-stream","data_base64":"YWJj"}`},
		{name: "EmptyBody", header: binaryHeader("Content-Type", "application/octet-stream"),
			want: head + `,"datacontenttype":"application/octet-stream"}`},
		{name: "QuotedContentType", header: binaryHeader("Content-Type", `text/plain; charset="utf-8"`), body: "x",
			want: head + `,"datacontenttype":"text/plain; charset=\"utf-8\"","data":"x"}`},
		{name: "AllAttributes",
			header: binaryHeader("ce-subject", "sub", "ce-time", "2020-01-01T00:00:00Z", "ce-dataschema", "http://s", "Content-Type", "text/plain"),
			body:   "x",
			want:   head + `,"subject":"sub","time":"2020-01-01T00:00:00Z","datacontenttype":"text/plain","dataschema":"http://s","data":"x"}`},
		{name: "ExtensionsSortedAndLowerCased", header: binaryHeader("Ce-Zeta", "z", "ce-ALPHA", "a", "CE-Mid1", "2"),
			want: head + `,"alpha":"a","mid1":"2","zeta":"z"}`},
		{name: "PercentEncoded", header: binaryHeader("ce-subject", "Euro%20%E2%82%AC%20%F0%9F%98%80", "ce-ext", "100%25%22%2f"),
			want: head + `,"subject":"Euro € 😀","ext":"100%\"/"}`},
		{name: "QuotedValue", header: binaryHeader("ce-subject", ` "a \"b\" c" `),
			want: head + `,"subject":"a \"b\" c"}`},
		{name: "QuotedThenPercentDecoded", header: binaryHeader("ce-subject", `"a%20b"`),
			want: head + `,"subject":"a b"}`},
		{name: "SpecVersionRC1", header: binaryHeader("ce-specversion", "\x00delete", "ce-specversion", "1.0-rc1"),
			want: head + `}`},
		{name: "CEDataContentTypeAlone", header: binaryHeader("ce-datacontenttype", "application/json"), body: `{}`,
			want: head + `,"datacontenttype":"application/json","data":{}}`},
		{name: "DefaultID", header: binaryHeader("ce-id", "\x00delete"), defaultID: "d1",
			want: `{"specversion":"1.0","id":"d1","source":"/src","type":"t"}`},
		{name: "SameID", header: binaryHeader(), defaultID: "1", want: head + `}`},

		{name: "DifferentID", header: binaryHeader(), defaultID: "2", code: bad, msg: `event at index 0: "id" is "1" but the request is for event id "2"`},
		{name: "NoID", header: binaryHeader("ce-id", "\x00delete"), code: bad, msg: `event at index 0: "id" is required`},
		{name: "EmptyID", header: binaryHeader("ce-id", "\x00delete", "ce-id", ""), code: bad, msg: `event at index 0: "id" must not be empty`},
		{name: "NoSource", header: binaryHeader("ce-source", "\x00delete"), code: bad, msg: `event at index 0: "source" is required`},
		{name: "NoType", header: binaryHeader("ce-type", "\x00delete"), code: bad, msg: `event at index 0: "type" is required`},
		{name: "NoSpecVersion", header: binaryHeader("ce-specversion", "\x00delete"), code: bad, msg: `event at index 0: "specversion" is required`},
		{name: "SpecVersion03", header: binaryHeader("ce-specversion", "\x00delete", "ce-specversion", "0.3"), code: bad, msg: `"specversion" must be "1.0", not "0.3"`},
		{name: "BadTime", header: binaryHeader("ce-time", "now"), code: bad, msg: `event at index 0: "time" must be an RFC 3339 timestamp, not "now"`},
		{name: "RepeatedHeader", header: binaryHeader("ce-type", "t2"), code: bad, msg: `header "ce-type" must appear exactly once`},
		{name: "SameHeaderTwoSpellings", header: func() http.Header {
			h := binaryHeader()
			h["ce-Ext"] = []string{"a"}
			h["CE-EXT"] = []string{"b"}
			return h
		}(), code: bad, msg: `header "ce-ext" must appear exactly once`},
		{name: "BadPercent", header: binaryHeader("ce-subject", "a%zz"), code: bad, msg: `header "ce-subject" is not a valid quoted or percent-encoded UTF-8 value`},
		{name: "TruncatedPercent", header: binaryHeader("ce-subject", "a%4"), code: bad, msg: `header "ce-subject" is not a valid`},
		{name: "OverlongUTF8", header: binaryHeader("ce-subject", "%C0%A0"), code: bad, msg: `header "ce-subject" is not a valid`},
		{name: "UnterminatedQuote", header: binaryHeader("ce-subject", `"abc`), code: bad, msg: `header "ce-subject" is not a valid`},
		{name: "BadExtensionName", header: binaryHeader("ce-my_ext", "x"), code: bad, msg: `event at index 0: "my_ext" is not a valid attribute name`},
		{name: "DataHeader", header: binaryHeader("ce-data", "x"), code: bad, msg: `event at index 0: "data" cannot be a header`},
		{name: "BothContentTypes", header: binaryHeader("ce-datacontenttype", "text/plain", "Content-Type", "text/plain"), code: bad,
			msg: `"datacontenttype" must be given by the Content-Type header, not also by ce-datacontenttype`},
		{name: "Oversize", header: binaryHeader("Content-Type", "application/octet-stream"), body: strings.Repeat("x", eventgrid.MaxEventSize*3/4+1),
			code: eventgrid.EPayloadTooLarge, msg: "event at index 0 is "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := schema.DecodeBinary(tt.header, []byte(tt.body), tt.defaultID, accepted)
			if tt.code != "" {
				MustFail(t, err, tt.code, tt.msg)
				if ev != nil {
					t.Fatal("event returned with the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			MustBeValidEvents(t, []*eventgrid.Event{ev})
			if string(ev.Body) != tt.want {
				t.Fatalf("Body =\n%s\nwant\n%s", ev.Body, tt.want)
			}
		})
	}
}

func TestDecodeBinary_Fields(t *testing.T) {
	ev, err := schema.DecodeBinary(binaryHeader("ce-subject", "a%20b"), nil, "", accepted)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "1" || ev.Type != "t" || !ev.HasSubject || ev.Subject != "a b" || !ev.Accepted.Equal(accepted) {
		t.Fatalf("event = %+v", *ev)
	}
}

func TestDecodeBinary_BodyNotShared(t *testing.T) {
	body := []byte(`{"a":1}`)
	ev, err := schema.DecodeBinary(binaryHeader("Content-Type", "application/json"), body, "", accepted)
	if err != nil {
		t.Fatal(err)
	}
	body[2] = 'X'
	if !strings.Contains(string(ev.Body), `"data":{"a":1}`) {
		t.Fatalf("Body changed with the request body: %s", ev.Body)
	}
}

func TestIsBinary(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   bool
	}{
		{"Canonical", http.Header{"Ce-Specversion": {"1.0"}}, true},
		{"RawLowerCase", http.Header{"ce-specversion": {"1.0"}}, true},
		{"RawUpperCase", http.Header{"CE-SPECVERSION": {"1.0"}}, true},
		{"StructuredMode", http.Header{"Content-Type": {"application/cloudevents+json"}}, false},
		{"OtherCEHeaders", http.Header{"Ce-Id": {"1"}}, false},
		{"Nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := schema.IsBinary(tt.header); got != tt.want {
				t.Fatalf("IsBinary = %v, want %v", got, tt.want)
			}
		})
	}
}
