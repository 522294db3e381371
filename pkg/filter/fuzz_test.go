package filter_test

import (
	"encoding/json"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
)

// fuzzEvents are matched against every filter that compiles.
var fuzzEvents = []*eventgrid.Event{
	egEvent(`{"x": 1, "s": "Hello", "b": true, "a": {"b": {"c": "\u00c4\\"}}, "n": null, "arr": [1, "x"]}`),
	egEvent(`"just a string"`),
	{Type: "t", Subject: "ſ", HasSubject: true, Body: []byte(`{"x":-0.0e-5,"s":"\u212A\ud83d\ude00","data":{"x":"1"}}`)},
	{Body: []byte(`{}`)},
	{Body: []byte(`[]`)},
	{Body: []byte(` {"x" : { "s" : [ ] } , "X": 9e999999999999} `)},
}

func FuzzCompile(f *testing.F) {
	f.Add("NumberIn", "data.x", "1", "[1, 2.5]", uint8(0), "E", "/a")
	f.Add("StringContains", "data.a.b.c", `"ä\\"`, `["x"]`, uint8(0), "all", "")
	f.Add("boolequals", "b", `"TRUE"`, "", uint8(1), "", "ſ")
	f.Add("NumberLessThan", "x", `"1e400"`, "null", uint8(2), "", "")
	f.Add("StringNotIn", "s", `""`, `[""]`, uint8(1), "t", "\u212A")
	f.Add("StringIn", "a..b", "{}", "[[]]", uint8(0), "", "")
	// The newer operators (docs/design.md#newer-filter-operators);
	// schemaSel's bit 4 turns on filtering on arrays.
	f.Add("StringNotContains", "data.s", "", `["ell", "x"]`, uint8(4), "", "")
	f.Add("stringNotBeginsWith", "data.missing", `"He"`, "", uint8(1), "", "")
	f.Add("StringNotEndsWith", "data.arr", "", `["x"]`, uint8(5), "", "")
	f.Add("NumberInRange", "data.x", "", `[[0, 1], [2, 3]]`, uint8(4), "", "")
	f.Add("NumberNotInRange", "x", `[[5, 1]]`, "", uint8(1), "", "")
	f.Add("NumberInRange", "data.arr", "", `[["1", "2"], [1]]`, uint8(6), "", "")
	f.Add("IsNullOrUndefined", "data.n", "", "", uint8(4), "", "")
	f.Add("IsNotNull", "data.a.b", "", "[]", uint8(0), "", "")
	f.Fuzz(func(t *testing.T, op, key, value, values string, schemaSel uint8, typ, subject string) {
		schema := []eventgrid.InputSchema{eventgrid.EventGridSchema, eventgrid.CloudEventSchemaV1_0,
			eventgrid.CustomEventSchema}[int(schemaSel&3)%3]
		af := eventgrid.AdvancedFilter{OperatorType: op, Key: key}
		if value != "" {
			af.Value = json.RawMessage(value)
		}
		var list []json.RawMessage
		if json.Unmarshal([]byte(values), &list) == nil {
			af.Values = list
		}
		fl := &eventgrid.Filter{
			IncludedEventTypes: []string{typ},
			SubjectBeginsWith:  subject,
			SubjectEndsWith:    subject,
			AdvancedFilters:    []eventgrid.AdvancedFilter{af, af},

			EnableAdvancedFilteringOnArrays: schemaSel&4 != 0,
		}
		m, err := filter.Compile(fl, schema, filter.Limits{MaxValuesPerFilter: 4, MaxStringLength: 64})
		if err != nil {
			if m != nil || eventgrid.ErrorCode(err) != eventgrid.EInvalidFilter {
				t.Fatalf("Compile() = %v, %v; want nil and an InvalidFilter error", m, err)
			}
			return
		}
		for _, ev := range fuzzEvents {
			m.Match(ev)
		}
		if value != "" && json.Valid([]byte(value)) {
			// Match the filter's own value, wherever the key points.
			ev := &eventgrid.Event{Type: typ, Subject: subject, HasSubject: true,
				Body: []byte(`{"data":{"x":` + value + `},"x":` + value + `}`)}
			m.Match(ev)
		}
	})
}
