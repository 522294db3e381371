package filter_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// FuzzFilterAgreesWithDecoder publishes body as a CustomEventSchema event
// and, when the broker accepts it, checks that a filter on key reads the
// value that encoding/json reads there: the filter for exactly that value
// (StringIn, NumberIn, BoolEquals, or IsNullOrUndefined for null or no
// value) must match, and IsNullOrUndefined must not match an object or
// array. Were duplicate member names let in, a filter would read the first
// and encoding/json the last, as in {"amount":5,"amount":99999}.
func FuzzFilterAgreesWithDecoder(f *testing.F) {
	f.Add([]byte(`{"amount":5,"amount":99999}`), "amount")
	f.Add([]byte(`{"role":"viewer","role":"admin"}`), "role")
	f.Add([]byte(`{"Role":"viewer","role":"admin"}`), "ROLE")
	f.Add([]byte(`{"a":{"b":[1,{"c":2}],"B":{"c":"x"}}}`), "a.b.c")
	f.Add([]byte(`{"a":{"\u0062":{"c":1e400}}}`), "A.B.C")
	f.Add([]byte(`{"\u212a":true,"n":null}`), "k")
	f.Add([]byte(`{"s":"\ud83d\ude00 \u00e9"}`), "s")
	f.Fuzz(func(t *testing.T, body []byte, key string) {
		ev, err := schema.DecodeOne(eventgrid.CustomEventSchema, "t", body, "", time.Time{})
		if err != nil {
			return // refused at the door
		}
		path := strings.Split(key, ".")
		want, found := lookupFold(t, ev.Body, path)
		var af eventgrid.AdvancedFilter
		present := true // whether the filter must match, or must not
		switch v := want.(type) {
		case nil:
			af = eventgrid.AdvancedFilter{OperatorType: "IsNullOrUndefined", Key: key}
		case string:
			lit, _ := json.Marshal(v)
			af = eventgrid.AdvancedFilter{OperatorType: "StringIn", Key: key, Values: []json.RawMessage{lit}}
		case json.Number:
			af = eventgrid.AdvancedFilter{OperatorType: "NumberIn", Key: key, Values: []json.RawMessage{json.RawMessage(v)}}
		case bool:
			lit, _ := json.Marshal(v)
			af = eventgrid.AdvancedFilter{OperatorType: "BoolEquals", Key: key, Value: lit}
		default: // an object or array, which no operator compares with
			af = eventgrid.AdvancedFilter{OperatorType: "IsNullOrUndefined", Key: key}
			present = false
		}
		m, err := filter.Compile(&eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{af}},
			eventgrid.CustomEventSchema, filter.Limits{MaxStringLength: 1 << 30})
		if err != nil {
			return // a key the filter syntax cannot name, such as one with an empty segment
		}
		if m.Match(ev) != present {
			t.Fatalf("event %s: encoding/json reads %#v at %q (found: %v), but %s %s gives %v",
				ev.Body, want, key, found, af.OperatorType, af.Values, !present)
		}
	})
}

// lookupFold decodes doc with encoding/json and follows path through its
// objects, each segment naming a member ignoring case, as filter keys do.
// Because the broker refuses names equal under case folding, at most one
// member can match.
func lookupFold(t *testing.T, doc []byte, path []string) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode an accepted event %q: %v", doc, err)
	}
	for _, seg := range path {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		matches := 0
		for k, mv := range obj {
			if strings.EqualFold(k, seg) {
				v, matches = mv, matches+1
			}
		}
		switch {
		case matches == 0:
			return nil, false
		case matches > 1:
			t.Fatalf("accepted event %s has %d members named %q ignoring case", doc, matches, seg)
		}
	}
	return v, true
}
