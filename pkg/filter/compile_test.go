package filter_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
)

func TestCanonicalOperator(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"numberin", "NumberIn", true},
		{"NUMBERGREATERTHANOREQUALS", "NumberGreaterThanOrEquals", true},
		{"StringContains", "StringContains", true},
		{"boolequals", "BoolEquals", true},
		{"stringnotin", "StringNotIn", true},
		{"stringnotcontains", "StringNotContains", true},
		{"NumberInRange", "NumberInRange", true},
		{"isnotnull", "IsNotNull", true},
		{"StringEquals", "", false},
		{"", "", false},
		{" NumberIn", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := filter.CanonicalOperator(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("CanonicalOperator(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// values returns n JSON values produced by f.
func values(n int, f func(i int) string) []string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = f(i)
	}
	return vs
}

func advFilters(n int) []eventgrid.AdvancedFilter {
	afs := make([]eventgrid.AdvancedFilter, n)
	for i := range afs {
		afs[i] = one("NumberLessThan", "data.n", "1")
	}
	return afs
}

func TestCompile_Errors(t *testing.T) {
	str := func(n int) string { return `"` + strings.Repeat("é", n) + `"` }
	num := func(int) string { return "1" }
	small := filter.Limits{MaxAdvancedFilters: 2, MaxValuesPerFilter: 3, MaxStringLength: 4}
	tests := []struct {
		name    string
		schema  eventgrid.InputSchema
		lim     filter.Limits
		filter  eventgrid.Filter
		wantErr string // "" for success
	}{
		// Operators.
		{"UnknownOperator", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "id", `"x"`), many("StringEquals", "id", `"x"`)}},
			`filter.advancedFilters[1]: unknown operator "StringEquals"`},
		{"NewerOperator", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("stringNotContains", "id", `"x"`)}}, ""},
		{"IsNullOrUndefined", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "IsNullOrUndefined", Key: "data.x"}}}, ""},
		{"IsNotNullWithValue", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "IsNotNull", Key: "data.x", Value: json.RawMessage(`1`)}}},
			`filter.advancedFilters[0] (IsNotNull on "data.x"): IsNotNull takes no value or values`},
		{"IsNullOrUndefinedWithValues", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "IsNullOrUndefined", Key: "data.x", Values: []json.RawMessage{}}}},
			`takes no value or values`},
		{"RangeNotAPair", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberInRange", "data.x", `[1, 2, 3]`)}},
			`values[0] must be a [low, high] pair of numbers`},
		{"RangeNotNumbers", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberInRange", "data.x", `[1, true]`)}},
			`values[0][1] must be a number`},
		{"RangeFlat", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberNotInRange", "data.x", `5`, `10`)}},
			`values[0] must be a [low, high] pair of numbers`},
		{"RangeReversed", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberInRange", "data.x", `[10, 5]`)}},
			`values[0] has its low bound above its high bound`},
		{"RangeMissing", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "NumberInRange", Key: "data.x"}}},
			`values is required`},
		{"MissingOperator", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("", "id", `"x"`)}},
			`filter.advancedFilters[0]: operatorType is required`},
		{"OperatorCaseInsensitive", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("stringin", "id", `"x"`)}}, ""},

		// Values.
		{"NumberGivenString", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{one("numberin", "data.x", "[1]"), many("NumberIn", "data.x", "1", `"abc"`)}},
			`filter.advancedFilters[1] (NumberIn on "data.x"): values[1] must be a number`},
		{"NumberGivenBool", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{one("NumberLessThan", "data.x", "true")}},
			`filter.advancedFilters[0] (NumberLessThan on "data.x"): value must be a number`},
		{"NumberGivenArrayElement", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberIn", "data.x", "[1]")}},
			`values[0] must be a number`},
		{"NumberGivenString", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberIn", "data.x", `"-1.5e3"`)}},
			`filter.advancedFilters[0] (NumberIn on "data.x"): values[0] must be a number, not a string (got "-1.5e3")`},
		{"RangeGivenStrings", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberInRange", "data.x", `["1", "2"]`)}},
			`values[0][0] must be a number, not a string`},
		{"BoolGivenNumber", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{one("BoolEquals", "data.x", "1")}},
			`(BoolEquals on "data.x"): value must be true or false`},
		{"BoolGivenOtherString", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{one("BoolEquals", "data.x", `"yes"`)}},
			`value must be true or false`},
		{"BoolTwoValues", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("BoolEquals", "data.x", "true", "false")}},
			`BoolEquals takes a single value, got 2`},
		{"StringGivenNumber", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringContains", "data.x", `"a"`, "1")}},
			`(StringContains on "data.x"): values[1] must be a string`},
		{"NullValue", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "data.x", `"a"`, "null")}},
			`values[1] must not be null`},
		{"NullSingleValue", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{one("NumberGreaterThan", "data.x", "null")}},
			`value must not be null`},
		{"EmptyValues", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "data.x")}},
			`values must not be empty`},
		{"EmptyValueArray", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{one("StringIn", "data.x", "[]")}},
			`value must not be an empty array`},
		{"NoValueAtAll", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "NumberLessThan", Key: "data.x"}}},
			`value is required`},
		{"NoValuesAtAll", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "NumberIn", Key: "data.x"}}},
			`values is required`},
		{"InvalidJSON", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "data.x", `"a`)}},
			`values[0] is not valid JSON`},
		{"ValuePreferredBySingle", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "NumberLessThan", Key: "data.x",
				Value: json.RawMessage("1"), Values: []json.RawMessage{json.RawMessage(`"x"`), json.RawMessage("2")}}}}, ""},
		{"ValuesPreferredByMulti", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "NumberIn", Key: "data.x",
				Value: json.RawMessage(`"x"`), Values: []json.RawMessage{json.RawMessage("2")}}}}, ""},

		// Keys.
		{"EmptyKey", eventgrid.CustomEventSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "", `"x"`)}},
			`filter.advancedFilters[0] (StringIn on ""): key is required`},
		{"EmptySegment", eventgrid.CustomEventSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "a..b", `"x"`)}},
			`key "a..b" has an empty segment`},
		{"LeadingDot", eventgrid.CloudEventSchemaV1_0, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", ".a", `"x"`)}},
			`key ".a" has an empty segment`},
		{"TrailingDot", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "data.", `"x"`)}},
			`key "data." has an empty segment`},
		{"EventGridUnknownKey", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "source", `"x"`)}},
			`key "source" is not allowed for EventGridSchema; use id, topic, subject, eventType, dataVersion`},
		{"EventGridEnvelopeSubpath", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "subject.x", `"x"`)}},
			`key "subject.x" is not allowed`},
		{"EventGridKeysOK", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "ID", `"x"`), many("StringIn", "Topic", `"x"`),
				many("StringIn", "EVENTTYPE", `"x"`), many("StringIn", "Data", `"x"`), many("StringIn", "data.$a.b", `"x"`)}}, ""},
		{"CloudAnyKey", eventgrid.CloudEventSchemaV1_0, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "source", `"x"`), many("StringIn", "myext", `"x"`)}}, ""},
		{"CustomAnyPath", eventgrid.CustomEventSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "a.b.c.d.e.f.g", `"x"`)}}, ""},

		// Limits, at and past each boundary.
		{"FiltersAtLimit", eventgrid.EventGridSchema, filter.DefaultLimits,
			eventgrid.Filter{AdvancedFilters: advFilters(25)}, ""},
		{"FiltersPastLimit", eventgrid.EventGridSchema, filter.DefaultLimits,
			eventgrid.Filter{AdvancedFilters: advFilters(26)},
			`filter.advancedFilters: 26 filters exceed the limit of 25 advanced filters per subscription`},
		{"FiltersPastSmallLimit", eventgrid.EventGridSchema, small,
			eventgrid.Filter{AdvancedFilters: advFilters(3)}, `exceed the limit of 2 advanced filters`},
		{"ValuesAtLimit", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberIn", "data.x", values(25, num)...)}}, ""},
		{"ValuesPastLimit", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberIn", "data.x", values(26, num)...)}},
			`(NumberIn on "data.x"): 26 values exceed the limit of 25 values per filter`},
		{"ValueArrayPastSmallLimit", eventgrid.EventGridSchema, small, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{one("NumberIn", "data.x", "[1,2,3,4]")}},
			`4 values exceed the limit of 3 values per filter`},
		{"StringAtLimit", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "data.x", `"a"`, str(512))}}, ""},
		{"StringPastLimit", eventgrid.EventGridSchema, filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "data.x", `"a"`, str(513))}},
			`values[1] is 513 characters long, over the limit of 512 characters`},
		{"StringPastSmallLimit", eventgrid.EventGridSchema, small, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{one("StringBeginsWith", "data.x", `"abcde"`)}},
			`value is 5 characters long, over the limit of 4 characters`},
		{"EventTypeAtLimit", eventgrid.EventGridSchema, filter.DefaultLimits,
			eventgrid.Filter{IncludedEventTypes: []string{strings.Repeat("é", 512)}}, ""},
		{"EventTypePastLimit", eventgrid.EventGridSchema, filter.DefaultLimits,
			eventgrid.Filter{IncludedEventTypes: []string{"a", strings.Repeat("é", 513)}},
			`filter.includedEventTypes[1] is 513 characters long, over the limit of 512 characters`},
		{"SubjectBeginsAtLimit", eventgrid.EventGridSchema, filter.DefaultLimits,
			eventgrid.Filter{SubjectBeginsWith: strings.Repeat("x", 512)}, ""},
		{"SubjectBeginsPastLimit", eventgrid.EventGridSchema, filter.DefaultLimits,
			eventgrid.Filter{SubjectBeginsWith: strings.Repeat("x", 513)},
			`filter.subjectBeginsWith is 513 characters long, over the limit of 512 characters`},
		{"SubjectEndsPastLimit", eventgrid.CloudEventSchemaV1_0, filter.DefaultLimits,
			eventgrid.Filter{SubjectEndsWith: strings.Repeat("x", 513)},
			`filter.subjectEndsWith is 513 characters long`},
		{"CustomIgnoresEnvelopeParts", eventgrid.CustomEventSchema, filter.DefaultLimits,
			eventgrid.Filter{SubjectEndsWith: strings.Repeat("x", 513), IncludedEventTypes: []string{strings.Repeat("x", 513)}}, ""},
		{"ZeroLimitsMeanDefaults", eventgrid.EventGridSchema, filter.Limits{},
			eventgrid.Filter{AdvancedFilters: advFilters(26)}, `exceed the limit of 25 advanced filters`},

		// Schema.
		{"EmptySchemaIsEventGrid", "", filter.DefaultLimits, eventgrid.Filter{
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "source", `"x"`)}},
			`is not allowed for EventGridSchema`},
		{"UnknownSchema", "Other", filter.DefaultLimits, eventgrid.Filter{}, `unknown input schema "Other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := filter.Compile(&tt.filter, tt.schema, tt.lim)
			if tt.wantErr == "" {
				if err != nil || m == nil {
					t.Fatalf("Compile() = %v, %v; want a Matcher", m, err)
				}
				return
			}
			var e *eventgrid.Error
			if !errors.As(err, &e) || e.Code != eventgrid.EInvalidFilter {
				t.Fatalf("Compile() error = %v, want an *eventgrid.Error with code %s", err, eventgrid.EInvalidFilter)
			}
			if !strings.Contains(e.Message, tt.wantErr) {
				t.Fatalf("Compile() message = %q, want it to contain %q", e.Message, tt.wantErr)
			}
			if m != nil {
				t.Fatalf("Compile() returned a Matcher with an error")
			}
		})
	}
}

func TestCompile_NilFilter(t *testing.T) {
	for _, schema := range []eventgrid.InputSchema{eventgrid.EventGridSchema, eventgrid.CloudEventSchemaV1_0, eventgrid.CustomEventSchema} {
		m, err := filter.Compile(nil, schema, filter.DefaultLimits)
		if err != nil || !m.Match(egEvent(`{}`)) {
			t.Fatalf("Compile(nil, %s) = %v; want a Matcher matching everything", schema, err)
		}
	}
}

func TestCompile_DoesNotKeepFilter(t *testing.T) {
	f := &eventgrid.Filter{
		IncludedEventTypes: []string{"E"},
		AdvancedFilters:    []eventgrid.AdvancedFilter{many("StringIn", "data.s", `"a"`)},
	}
	m := MustCompile(t, f, eventgrid.EventGridSchema)
	f.IncludedEventTypes[0] = "X"
	f.AdvancedFilters[0].Key = "data.t"
	f.AdvancedFilters[0].Values[0][1] = 'b'
	if !m.Match(egEvent(`{"s":"A"}`)) {
		t.Fatal("Matcher changed when the compiled Filter was modified")
	}
}
