package filter_test

import (
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// newerData has the shapes the cloud documentation's examples use.
const newerData = `{"key1": "hello world", "key2": 7, "key3": null, "counts": [1, 5, 17], "tags": ["blue", "Green"],
	"n": 4.5, "mixed": [1, "two", null], "empty": [], "nested": {"x": "value"}}`

func TestMatch_NewerOperators(t *testing.T) {
	null := func(op, key string) eventgrid.AdvancedFilter {
		return eventgrid.AdvancedFilter{OperatorType: op, Key: key}
	}
	tests := []struct {
		name   string
		af     eventgrid.AdvancedFilter
		arrays bool
		want   bool
	}{
		// StringNotContains / NotBeginsWith / NotEndsWith: none of the values.
		{"NotContains", many("StringNotContains", "data.key1", `"mars"`, `"venus"`), false, true},
		{"NotContainsHit", many("StringNotContains", "data.key1", `"mars"`, `"WORLD"`), false, false},
		{"NotBeginsWith", many("StringNotBeginsWith", "data.key1", `"world"`), false, true},
		{"NotBeginsWithHit", many("StringNotBeginsWith", "data.key1", `"Hello"`), false, false},
		{"NotEndsWith", many("StringNotEndsWith", "data.key1", `"hello"`), false, true},
		{"NotEndsWithHit", many("StringNotEndsWith", "data.key1", `"LD"`), false, false},
		{"NotContainsOnNumber", many("StringNotContains", "data.key2", `"x"`), false, false},
		// A missing key matches the Not… string operators
		// (docs/design.md#newer-filter-operators) ...
		{"NotContainsMissingKey", many("StringNotContains", "data.absent", `"x"`), false, true},
		{"NotBeginsWithMissingPath", many("StringNotBeginsWith", "data.nested.y.z", `"x"`), false, true},
		{"NotEndsWithMissingKey", many("StringNotEndsWith", "data.absent", `"x"`), false, true},
		// ... but not the original twelve (docs/design.md#filters).
		{"StringNotInMissingKey", many("StringNotIn", "data.absent", `"x"`), false, false},
		{"NumberNotInMissingKey", many("NumberNotIn", "data.absent", "1"), false, false},

		// NumberInRange / NumberNotInRange: [low, high] pairs, bounds inclusive.
		{"InRange", many("NumberInRange", "data.key2", "[3.14159, 999.95]", "[-10, 0]"), false, true},
		{"InRangeLowBound", many("NumberInRange", "data.key2", "[7, 8]"), false, true},
		{"InRangeHighBound", many("NumberInRange", "data.key2", "[1, 7]"), false, true},
		{"InRangeOutside", many("NumberInRange", "data.key2", "[7.000001, 8]", "[-1, 6.9999]"), false, false},
		{"InRangeExactDecimal", many("NumberInRange", "data.n", "[4.50, 4.50]"), false, true},
		{"NotInRange", many("NumberNotInRange", "data.key2", "[8, 10]", "[0, 6]"), false, true},
		{"NotInRangeHit", many("NumberNotInRange", "data.key2", "[0, 6]", "[7, 7]"), false, false},
		{"InRangeOnString", many("NumberInRange", "data.key1", "[0, 10]"), false, false},
		{"NotInRangeOnString", many("NumberNotInRange", "data.key1", "[0, 10]"), false, false},
		{"InRangeMissingKey", many("NumberInRange", "data.absent", "[0, 10]"), false, false},
		{"NotInRangeMissingKey", many("NumberNotInRange", "data.absent", "[0, 10]"), false, false},

		// IsNullOrUndefined / IsNotNull.
		{"NullOrUndefinedNull", null("IsNullOrUndefined", "data.key3"), false, true},
		{"NullOrUndefinedMissing", null("IsNullOrUndefined", "data.absent"), false, true},
		{"NullOrUndefinedMissingPath", null("IsNullOrUndefined", "data.key1.deeper"), false, true},
		{"NullOrUndefinedValue", null("IsNullOrUndefined", "data.key1"), false, false},
		{"NullOrUndefinedObject", null("IsNullOrUndefined", "data.nested"), false, false},
		{"NotNullValue", null("IsNotNull", "data.key2"), false, true},
		{"NotNullObject", null("IsNotNull", "data.nested"), false, true},
		{"NotNullNull", null("IsNotNull", "data.key3"), false, false},
		{"NotNullMissing", null("IsNotNull", "data.absent"), false, false},
		{"NotNullArrayOff", null("IsNotNull", "data.counts"), false, false},
		{"NotNullArrayOn", null("IsNotNull", "data.counts"), true, true},
		{"NullOrUndefinedArrayOn", null("IsNullOrUndefined", "data.counts"), true, false},
		{"NotNullEnvelope", null("IsNotNull", "subject"), false, true},

		// enableAdvancedFilteringOnArrays: any element; for Not…, none.
		{"ArraysOffNumberIn", many("NumberIn", "data.counts", "5"), false, false},
		{"ArraysOnNumberIn", many("NumberIn", "data.counts", "5"), true, true},
		{"ArraysOnNumberInNone", many("NumberIn", "data.counts", "6"), true, false},
		{"ArraysOnGreaterThan", one("NumberGreaterThan", "data.counts", "10"), true, true},
		{"ArraysOnGreaterThanNone", one("NumberGreaterThan", "data.counts", "17"), true, false},
		{"ArraysOnNotIn", many("NumberNotIn", "data.counts", "6", "7"), true, true},
		{"ArraysOnNotInHit", many("NumberNotIn", "data.counts", "17"), true, false},
		{"ArraysOffNotIn", many("NumberNotIn", "data.counts", "6"), false, false},
		{"ArraysOnStringIn", many("StringIn", "data.tags", `"green"`), true, true},
		{"ArraysOnStringNotIn", many("StringNotIn", "data.tags", `"red"`), true, true},
		{"ArraysOnStringNotInHit", many("StringNotIn", "data.tags", `"BLUE"`), true, false},
		{"ArraysOnNotContains", many("StringNotContains", "data.tags", `"ee"`), true, false},
		{"ArraysOnNotBeginsWith", many("StringNotBeginsWith", "data.tags", `"r"`), true, true},
		{"ArraysOnInRange", many("NumberInRange", "data.counts", "[10, 20]"), true, true},
		{"ArraysOnNotInRange", many("NumberNotInRange", "data.counts", "[10, 20]"), true, false},
		{"ArraysOnNotInRangeNone", many("NumberNotInRange", "data.counts", "[100, 200]"), true, true},
		{"ArraysOnMixedTypes", many("StringIn", "data.mixed", `"TWO"`), true, true},
		{"ArraysOnBool", one("BoolEquals", "data.mixed", "true"), true, false},
		{"ArraysOnEmpty", many("NumberIn", "data.empty", "1"), true, false},
		{"ArraysOnEmptyNot", many("NumberNotIn", "data.empty", "1"), true, true},
		{"ArraysOnScalarStillWorks", many("StringIn", "data.key1", `"hello world"`), true, true},
	}
	ev := egEvent(newerData)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{tt.af}, EnableAdvancedFilteringOnArrays: tt.arrays}
			m := MustCompile(t, f, eventgrid.EventGridSchema)
			if got := m.Match(ev); got != tt.want {
				t.Fatalf("Match() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestMatch_MissingKeysAmongOthers: a cond whose key is missing but which
// matches anyway must not spoil the key cache of the conds after it.
func TestMatch_MissingKeysAmongOthers(t *testing.T) {
	ev := egEvent(`{"a": {"b": {"c": 1}}, "z": "x"}`)
	f := &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
		{OperatorType: "IsNullOrUndefined", Key: "data.a.x.y"},
		one("NumberIn", "data.a.b.c", "1"),
		many("StringNotContains", "data.a.b.q", `"x"`),
		{OperatorType: "IsNotNull", Key: "data.a.b"},
		many("StringIn", "data.z", `"X"`),
	}}
	if !MustCompile(t, f, eventgrid.EventGridSchema).Match(ev) {
		t.Fatal("filter does not match")
	}
	f.AdvancedFilters = append(f.AdvancedFilters, eventgrid.AdvancedFilter{OperatorType: "IsNotNull", Key: "data.a.x"})
	if MustCompile(t, f, eventgrid.EventGridSchema).Match(ev) {
		t.Fatal("IsNotNull on a missing key matched")
	}
}

func newerBenchFilters() map[string]*eventgrid.Filter {
	return map[string]*eventgrid.Filter{
		"StringNotContains": {AdvancedFilters: []eventgrid.AdvancedFilter{many("StringNotContains", "data.key1", `"mars"`, `"venus"`, `"jupiter"`)}},
		"NumberInRange":     {AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberInRange", "data.key2", "[100, 200]", "[-5, 0]", "[5, 10]")}},
		"IsNullOrUndefined": {AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "IsNullOrUndefined", Key: "data.absent"}}},
		"IsNotNull":         {AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "IsNotNull", Key: "data.nested"}}},
		"ArraysNumberIn": {AdvancedFilters: []eventgrid.AdvancedFilter{many("NumberIn", "data.counts", "17")},
			EnableAdvancedFilteringOnArrays: true},
		"ArraysStringNotIn": {AdvancedFilters: []eventgrid.AdvancedFilter{many("StringNotIn", "data.tags", `"red"`)},
			EnableAdvancedFilteringOnArrays: true},
	}
}

func BenchmarkMatch_Newer(b *testing.B) {
	ev := egEvent(newerData)
	for name, f := range newerBenchFilters() {
		b.Run(name, func(b *testing.B) {
			m := MustCompile(b, f, eventgrid.EventGridSchema)
			if !m.Match(ev) {
				b.Fatal("filter does not match the benchmark event")
			}
			b.ReportAllocs()
			for b.Loop() {
				m.Match(ev)
			}
		})
	}
}

func TestMatch_NewerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	ev := egEvent(newerData)
	for name, f := range newerBenchFilters() {
		t.Run(name, func(t *testing.T) {
			m := MustCompile(t, f, eventgrid.EventGridSchema)
			if allocs := testing.AllocsPerRun(100, func() { m.Match(ev) }); allocs != 0 {
				t.Fatalf("Match allocates %v times per call, want 0", allocs)
			}
		})
	}
}
