package rawjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

func TestValidStrict(t *testing.T) {
	many := func(extra string) string {
		var sb strings.Builder
		sb.WriteString(`{"data":{`)
		for i := range 100 {
			sb.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
		}
		sb.WriteString(extra + `}}`)
		return sb.String()
	}
	tests := []struct {
		in      string
		kind    int // 0: valid
		element int
		path    string
		inName  bool
	}{
		{in: `{"amount":5,"Amount":6,"b":{"amount":1}}`, kind: rawjson.DuplicateName, path: "Amount"},
		{in: `[{"a":1},{"data":{"amount":5,"amount":99999}}]`, kind: rawjson.DuplicateName, element: 1, path: "data.amount"},
		{in: `[{"role":"viewer","role":"admin"}]`, kind: rawjson.DuplicateName, path: "role"},
		{in: `{"a":[1,{"x":1,"y":{"z":[{"q":1,"\u0071":2}]}}]}`, kind: rawjson.DuplicateName, path: "a[1].y.z[0].q"},
		{in: `{"k":1,"\u212a":2}`, kind: rawjson.DuplicateName, path: "\u212a"}, // Kelvin sign folds to k
		{in: `{"ſ":1,"S":2}`, kind: rawjson.DuplicateName, path: "S"},           // long s folds to s
		{in: `{"":1,"":2}`, kind: rawjson.DuplicateName, path: ""},
		{in: many(`"KXX":2`), kind: rawjson.DuplicateName, path: "data.KXX"},
		{in: many(`"k\u0078\u0078x":2`), kind: rawjson.DuplicateName, path: "data.kxxx"},
		{in: many(`"new":2`)},
		{in: "{\"@\":1,\"`\":2,\"[x\":3,\"{X\":4}"}, // names whose hashes collide are compared in full
		{in: many("\"[\":1,\"{\":2")},
		{in: many("\"[\":1,\"{\":2,\"{\":3"), kind: rawjson.DuplicateName, path: "data.{"},
		{in: `{"a":{"x":1},"b":{"x":1},"x":[{"x":1},{"x":2}]}`}, // same name in different objects
		{in: `{"ab":1,"ba":2,"a\u0062c":3,"é":1,"É\u0301":2,"e\u0301":3}`},
		{in: "[{\"a\":\"ok\"},{\"s\":\"\xff\"}]", kind: rawjson.InvalidUTF8, element: 1, path: "s"},
		{in: "{\"d\":{\"\xc3\x28\":1}}", kind: rawjson.InvalidUTF8, path: "d", inName: true},
		{in: "\"\xed\xa0\x80\"", kind: rawjson.InvalidUTF8},                    // UTF-8-encoded surrogate
		{in: "{\"0\":{\"\":\"\xc2\"}}", kind: rawjson.InvalidUTF8, path: "0."}, // an empty name
		{in: `{"s":"\ud83d"}`, kind: rawjson.LoneSurrogate, path: "s"},
		{in: `{"s":"\ude00x"}`, kind: rawjson.LoneSurrogate, path: "s"},
		{in: `{"s":"\ud83d\u0041"}`, kind: rawjson.LoneSurrogate, path: "s"},
		{in: `{"s":"\ud83d\ude00 \\ude00 \u00e9 ÄÖ😀"}`},
	}
	for _, tt := range tests {
		n, err := rawjson.ValidStrict([]byte(tt.in))
		if !json.Valid([]byte(tt.in)) {
			t.Fatalf("test input %q is not valid JSON", tt.in)
		}
		if tt.kind == 0 {
			if err != nil {
				t.Errorf("ValidStrict(%.60q) = %v, want no error", tt.in, err)
			}
			continue
		}
		var se *rawjson.StrictError
		if !errors.As(err, &se) {
			t.Errorf("ValidStrict(%.60q) = %d, %v; want a StrictError", tt.in, n, err)
			continue
		}
		if se.Kind != tt.kind || se.Element != tt.element || se.Path != tt.path || se.InName != tt.inName {
			t.Errorf("ValidStrict(%.60q) = %+v; want kind %d, element %d, path %q, in name %v",
				tt.in, *se, tt.kind, tt.element, tt.path, tt.inName)
		}
	}
	for _, bad := range []string{``, `{"a":1,}`, `[1,2`, `{"a":1,"a"}`, "\"\xff"} {
		if _, err := rawjson.ValidStrict([]byte(bad)); err != rawjson.ErrSyntax {
			t.Errorf("ValidStrict(%q) = %v, want ErrSyntax", bad, err)
		}
	}
	if n, err := rawjson.ValidStrict([]byte(` [ {"a":1}, {"a":2}, 3 ] `)); n != 3 || err != nil {
		t.Errorf("ValidStrict counted %d elements, %v; want 3", n, err)
	}
}

func TestValidStrictAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled values at random")
	}
	doc := []byte(`[{"id":"1","data":{"a":1,"b":[{"t":1,"v":2},{"t":2,"v":3}],"s":"ÄÖ\u00e9"}}]`)
	if n := testing.AllocsPerRun(100, func() { rawjson.ValidStrict(doc) }); n != 0 {
		t.Errorf("ValidStrict allocates %v times per call, want 0", n)
	}
}

// duplicateName is the reference for ValidStrict's duplicate check, built
// on encoding/json's tokenizer: it reports whether some object has two
// member names equal under strings.EqualFold.
func duplicateName(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		obj   bool
		key   bool // the next token in an object is a name
		names []string
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			name := tok.(string)
			for _, n := range top.names {
				if strings.EqualFold(n, name) {
					return true
				}
			}
			top.names = append(top.names, name)
			top.key = false
			continue
		}
		if top != nil && top.obj {
			top.key = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

// FuzzValidStrict checks ValidStrict against encoding/json: it accepts only
// valid JSON, refuses only valid JSON for a StrictError, and what it
// accepts is UTF-8 with no object naming a member twice.
func FuzzValidStrict(f *testing.F) {
	for _, s := range []string{`{"a":1,"A":2}`, `[{"x":{"y":1,"\u0059":2}}]`, `{"k":1,"\u212a":2}`, `{"s":"\ud83d\ude00"}`,
		`{"s":"\udc00"}`, "{\"\xff\":1}", "{\"0\":{\"\":\"\xc2\"}}", "[{\"\":[\"\xc2\"]}]", `{"a":[{"b":1},{"b":2}]}`, `[1,{"":0,"":1}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := rawjson.ValidStrict(b)
		valid := json.Valid(b)
		switch {
		case err == rawjson.ErrSyntax:
			if valid {
				t.Fatalf("ValidStrict(%q) = ErrSyntax for valid JSON", b)
			}
		case !valid:
			t.Fatalf("ValidStrict(%q) = %v for invalid JSON", b, err)
		case err == nil:
			if !utf8.Valid(b) {
				t.Fatalf("ValidStrict(%q) accepted invalid UTF-8", b)
			}
			if duplicateName(b) {
				t.Fatalf("ValidStrict(%q) accepted a duplicate member name", b)
			}
		default:
			var se *rawjson.StrictError
			if !errors.As(err, &se) {
				t.Fatalf("ValidStrict(%q) = %v", b, err)
			}
			if se.Kind == rawjson.DuplicateName && !duplicateName(b) {
				t.Fatalf("ValidStrict(%q) = %v, but encoding/json sees no duplicate", b, err)
			}
		}
	})
}
