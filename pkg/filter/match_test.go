package filter_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
)

// data is the event data the advanced-filter tests run against.
const data = `{"n": 4.5600, "i": 9007199254740993, "big": 1e400, "neg0": -0, "tiny": 1e-320, "neg": -2.5,
	"s": "Hello World", "u": "ÄBC", "esc": "Tab\tQuote\"\u00c4", "t": true, "f": false, "z": null,
	"arr": [1, "Hello World", true], "obj": {"a": 1}, "ns": "4.56",
	"a": {"B": {"c": 7, "C": 8, "deep": {"x": {"y": "bottom"}}}}, "$k": "dollar", "kelvin": "Kilo", "Mixed": 1, "mixed": 2}`

func TestMatch_AdvancedFilters(t *testing.T) {
	tests := []struct {
		name string
		af   eventgrid.AdvancedFilter
		want bool
	}{
		// Numbers, compared as exact decimals.
		{"GreaterThan", one("NumberGreaterThan", "data.n", "4.55"), true},
		{"GreaterThanEqual", one("NumberGreaterThan", "data.n", "4.56"), false},
		{"GreaterThanOrEqualsTrailingZeros", one("NumberGreaterThanOrEquals", "data.n", "4.56"), true},
		{"GreaterThanOrEqualsAbove", one("NumberGreaterThanOrEquals", "data.n", "4.5601"), false},
		{"LessThan", one("NumberLessThan", "data.n", "4.561"), true},
		{"LessThanEqual", one("NumberLessThan", "data.n", "456e-2"), false},
		{"LessThanOrEquals", one("NumberLessThanOrEquals", "data.n", "0.456e1"), true},
		{"LessThanOrEqualsBelow", one("NumberLessThanOrEquals", "data.n", "4.5599999999999999999"), false},
		{"InTrailingZeros", many("NumberIn", "data.n", "1", "4.56"), true},
		{"InNone", many("NumberIn", "data.n", "1", "4.5"), false},
		{"NotIn", many("NumberNotIn", "data.n", "1", "4.5"), true},
		{"NotInListed", many("NumberNotIn", "data.n", "1", "4.560000"), false},
		{"BeyondFloat64In", many("NumberIn", "data.i", "9007199254740992"), false},
		{"BeyondFloat64Exact", many("NumberIn", "data.i", "9007199254740993"), true},
		{"BeyondFloat64Greater", one("NumberGreaterThan", "data.i", "9007199254740992"), true},
		{"HugeExponent", one("NumberGreaterThan", "data.big", "1e399"), true},
		{"HugeExponentEqual", many("NumberIn", "data.big", "10e399"), true},
		{"NegativeZeroIsZero", many("NumberIn", "data.neg0", "0"), true},
		{"NegativeZeroNotBelowZero", one("NumberLessThan", "data.neg0", "0"), false},
		{"TinyAboveZero", one("NumberGreaterThan", "data.tiny", "0"), true},
		{"TinyBelowDenormal", one("NumberLessThan", "data.tiny", "1e-319"), true},
		{"Negative", one("NumberLessThan", "data.neg", "-2.4"), true},
		{"NumberSingleFromValues", many("NumberGreaterThan", "data.n", "4"), true},
		{"NumberInFromValue", one("NumberIn", "data.n", "4.56"), true},
		{"NumberInFromValueArray", one("NumberIn", "data.n", "[1, 4.56]"), true},

		// Booleans.
		{"BoolTrue", one("BoolEquals", "data.t", "true"), true},
		{"BoolTrueVsFalse", one("BoolEquals", "data.f", "true"), false},
		{"BoolFalse", one("BoolEquals", "data.f", "false"), true},
		{"BoolStringValue", one("BoolEquals", "data.t", `"TRUE"`), true},
		{"BoolFromValues", many("BoolEquals", "data.f", `"False"`), true},

		// Strings, always case-insensitive.
		{"StringIn", many("StringIn", "data.s", `"x"`, `"hello world"`), true},
		{"StringInNone", many("StringIn", "data.s", `"hello"`), false},
		{"StringNotIn", many("StringNotIn", "data.s", `"x"`, `"hello"`), true},
		{"StringNotInListed", many("StringNotIn", "data.s", `"x"`, `"HELLO WORLD"`), false},
		{"BeginsWith", many("StringBeginsWith", "data.s", `"x"`, `"hELLO"`), true},
		{"BeginsWithNone", many("StringBeginsWith", "data.s", `"world"`), false},
		{"EndsWith", many("StringEndsWith", "data.s", `"WORLD"`), true},
		{"EndsWithNone", many("StringEndsWith", "data.s", `"hello"`), false},
		{"Contains", many("StringContains", "data.s", `"O W"`), true},
		{"ContainsNone", many("StringContains", "data.s", `"ow"`), false},
		{"ContainsWhole", many("StringContains", "data.s", `"hello world"`), true},
		{"ContainsLonger", many("StringContains", "data.s", `"hello world!"`), false},
		{"ContainsEmpty", many("StringContains", "data.s", `""`), true},
		{"StringInFromValue", one("StringIn", "data.s", `"HELLO WORLD"`), true},
		{"UnicodeFoldIn", many("StringIn", "data.u", `"äbc"`), true},
		{"UnicodeFoldBegins", many("StringBeginsWith", "data.u", `"ä"`), true},
		{"UnicodeFoldEnds", many("StringEndsWith", "data.u", `"Äbc"`), true},
		{"UnicodeFoldContains", many("StringContains", "data.u", `"äB"`), true},
		{"UnicodeNotFolded", many("StringIn", "data.u", `"abc"`), false},
		{"KelvinSignFoldsToK", many("StringIn", "data.kelvin", `"\u212Ailo"`), true},
		{"LongSFoldsToS", many("StringEndsWith", "data.s", `"WORLD"`, `"\u017F"`), true},
		{"SharpSIsNotSS", many("StringIn", "data.u", `"ßBC"`), false},
		{"EscapedEventValue", many("StringIn", "data.esc", `"tab\tquote\"ä"`), true},
		{"EscapedContains", many("StringContains", "data.esc", `"QUOTE\"Ä"`), true},

		// Keys: nested, case-insensitive, exact preferred, $ is ordinary.
		{"NestedKey", many("NumberIn", "data.a.b.c", "7"), true},
		{"NestedExactPreferred", many("NumberIn", "data.a.B.C", "8"), true},
		{"NestedFolded", many("NumberIn", "DATA.A.b.c", "7"), true},
		{"Deep", many("StringIn", "Data.A.B.Deep.X.Y", `"BOTTOM"`), true},
		{"DollarKey", many("StringIn", "data.$k", `"dollar"`), true},
		{"ExactCaseFirst", many("NumberIn", "data.mixed", "2"), true},
		{"MissingKey", many("NumberIn", "data.missing", "1"), false},
		{"MissingParent", many("StringIn", "data.missing.deeper", `"x"`), false},
		{"PathThroughScalar", many("StringIn", "data.s.x", `"x"`), false},

		// Missing keys, nulls, arrays, objects and type mismatches never match.
		{"NotInMissingKey", many("NumberNotIn", "data.missing", "1"), false},
		{"StringNotInMissingKey", many("StringNotIn", "data.missing", `"x"`), false},
		{"NotInNull", many("StringNotIn", "data.z", `"x"`), false},
		{"NumberOnNull", one("NumberLessThan", "data.z", "1"), false},
		{"BoolOnNull", one("BoolEquals", "data.z", "false"), false},
		{"StringInArray", many("StringIn", "data.arr", `"Hello World"`), false},
		{"NumberInArray", many("NumberIn", "data.arr", "1"), false},
		{"NotInArray", many("NumberNotIn", "data.arr", "5"), false},
		{"StringOnObject", many("StringNotIn", "data.obj", `"x"`), false},
		{"StringOnNumber", many("StringNotIn", "data.n", `"x"`), false},
		{"StringInOnNumber", many("StringIn", "data.n", `"4.5600"`), false},
		{"NumberOnString", many("NumberIn", "data.ns", "4.56"), false},
		{"NumberNotInOnString", many("NumberNotIn", "data.ns", "1"), false},
		{"BoolOnString", one("BoolEquals", "data.s", "true"), false},
		{"BoolOnNumber", one("BoolEquals", "data.n", "false"), false},
		{"BoolOnStringTrue", one("BoolEquals", "data.ns", "true"), false},
		{"NumberOnBool", one("NumberGreaterThan", "data.t", "0"), false},

		// EventGridSchema envelope keys.
		{"EnvelopeID", many("StringIn", "ID", `"1"`), true},
		{"EnvelopeTopic", many("StringIn", "Topic", `"T"`), true},
		{"EnvelopeSubject", many("StringBeginsWith", "subject", `"/A/"`), true},
		{"EnvelopeEventType", many("StringIn", "EventType", `"e"`), true},
		{"EnvelopeDataVersion", many("StringIn", "dataversion", `"1"`), true},
		{"EnvelopeEventTime", many("StringBeginsWith", "eventTime", `"2020-"`), true},
		{"EnvelopeMetadataVersion", many("StringIn", "metadataVersion", `"1"`), true},
		{"EnvelopeData", many("StringIn", "data", `"x"`), false},
	}
	ev := egEvent(data)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{tt.af}}
			m := MustCompile(t, f, eventgrid.EventGridSchema)
			if got := m.Match(ev); got != tt.want {
				t.Fatalf("Match() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatch_Envelope(t *testing.T) {
	tests := []struct {
		name   string
		filter *eventgrid.Filter
		ev     *eventgrid.Event
		want   bool
	}{
		{"NilFilter", nil, subjectEvent("E", "/a"), true},
		{"EmptyFilter", &eventgrid.Filter{}, subjectEvent("E", "/a"), true},
		{"TypeListed", &eventgrid.Filter{IncludedEventTypes: []string{"X", "e"}}, subjectEvent("E", "/a"), true},
		{"TypeNotListed", &eventgrid.Filter{IncludedEventTypes: []string{"X"}}, subjectEvent("E", "/a"), false},
		{"TypeUnicodeFold", &eventgrid.Filter{IncludedEventTypes: []string{"äbc"}}, subjectEvent("ÄBC", "/a"), true},
		{"TypeAll", &eventgrid.Filter{IncludedEventTypes: []string{"X", "ALL"}}, subjectEvent("E", "/a"), true},
		{"TypeEmptyList", &eventgrid.Filter{IncludedEventTypes: []string{}}, subjectEvent("E", "/a"), true},
		{"TypeNotPrefix", &eventgrid.Filter{IncludedEventTypes: []string{"E"}}, subjectEvent("EE", "/a"), false},
		{"BeginsWith", &eventgrid.Filter{SubjectBeginsWith: "/A/"}, subjectEvent("E", "/a/b"), true},
		{"BeginsWithNo", &eventgrid.Filter{SubjectBeginsWith: "/b"}, subjectEvent("E", "/a/b"), false},
		{"BeginsWithSensitive", &eventgrid.Filter{SubjectBeginsWith: "/A/", IsSubjectCaseSensitive: true}, subjectEvent("E", "/a/b"), false},
		{"BeginsWithSensitiveOK", &eventgrid.Filter{SubjectBeginsWith: "/a/", IsSubjectCaseSensitive: true}, subjectEvent("E", "/a/b"), true},
		{"EndsWith", &eventgrid.Filter{SubjectEndsWith: ".JPG"}, subjectEvent("E", "x.jpg"), true},
		{"EndsWithUnicode", &eventgrid.Filter{SubjectEndsWith: "Ä.jpg"}, subjectEvent("E", "xä.JPG"), true},
		{"EndsWithSensitive", &eventgrid.Filter{SubjectEndsWith: ".JPG", IsSubjectCaseSensitive: true}, subjectEvent("E", "x.jpg"), false},
		{"EndsWithLonger", &eventgrid.Filter{SubjectEndsWith: "/x.jpg"}, subjectEvent("E", "x.jpg"), false},
		{"Both", &eventgrid.Filter{SubjectBeginsWith: "/a", SubjectEndsWith: "b"}, subjectEvent("E", "/a/b"), true},
		{"BothOneFails", &eventgrid.Filter{SubjectBeginsWith: "/a", SubjectEndsWith: "c"}, subjectEvent("E", "/a/b"), false},
		{"NoSubject", &eventgrid.Filter{SubjectEndsWith: "b"}, &eventgrid.Event{Type: "E", Body: []byte(`{}`)}, false},
		{"NoSubjectSensitive", &eventgrid.Filter{SubjectBeginsWith: "/", IsSubjectCaseSensitive: true},
			&eventgrid.Event{Type: "E", Body: []byte(`{}`)}, false},
		{"AllPartsAnded", &eventgrid.Filter{IncludedEventTypes: []string{"E"}, SubjectBeginsWith: "/a",
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "id", `"2"`)}}, subjectEvent("E", "/a"), false},
		{"AllPartsMatch", &eventgrid.Filter{IncludedEventTypes: []string{"E"}, SubjectBeginsWith: "/a",
			AdvancedFilters: []eventgrid.AdvancedFilter{many("StringIn", "id", `"1"`), one("BoolEquals", "data.t", "true")}},
			egEvent(`{"t":true}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := MustCompile(t, tt.filter, eventgrid.EventGridSchema)
			if got := m.Match(tt.ev); got != tt.want {
				t.Fatalf("Match() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatch_Schemas(t *testing.T) {
	ce := &eventgrid.Event{ID: "9", Type: "com.example.x", Subject: "s", HasSubject: true,
		Body: []byte(`{"specversion":"1.0","id":"9","source":"/src","type":"com.example.x","subject":"s",` +
			`"myext":"Value","data":{"n":3}}`)}
	custom := &eventgrid.Event{Body: []byte(`{"weird":{"Path":{"$x":[1]},"v":"yes"},"eventType":"E","subject":"/a"}`)}
	tests := []struct {
		name   string
		schema eventgrid.InputSchema
		filter eventgrid.Filter
		ev     *eventgrid.Event
		want   bool
	}{
		{"CloudType", eventgrid.CloudEventSchemaV1_0, eventgrid.Filter{IncludedEventTypes: []string{"COM.example.X"}}, ce, true},
		{"CloudSubject", eventgrid.CloudEventSchemaV1_0, eventgrid.Filter{SubjectBeginsWith: "S"}, ce, true},
		{"CloudExtension", eventgrid.CloudEventSchemaV1_0, eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
			many("StringIn", "MyExt", `"value"`)}}, ce, true},
		{"CloudSource", eventgrid.CloudEventSchemaV1_0, eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
			many("StringBeginsWith", "source", `"/"`)}}, ce, true},
		{"CloudData", eventgrid.CloudEventSchemaV1_0, eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
			one("NumberGreaterThan", "data.n", "2")}}, ce, true},
		{"CloudNoSubject", eventgrid.CloudEventSchemaV1_0, eventgrid.Filter{SubjectEndsWith: "x"},
			&eventgrid.Event{Type: "t", Body: []byte(`{"type":"t"}`)}, false},
		{"CustomArbitraryPath", eventgrid.CustomEventSchema, eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
			many("StringIn", "weird.v", `"YES"`), many("NumberNotIn", "weird.path.$x", "1")}}, custom, false},
		{"CustomArbitraryPathMatch", eventgrid.CustomEventSchema, eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
			many("StringIn", "weird.v", `"YES"`)}}, custom, true},
		{"CustomIgnoresTypesAndSubject", eventgrid.CustomEventSchema, eventgrid.Filter{
			IncludedEventTypes: []string{"Other"}, SubjectBeginsWith: "/b"}, custom, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := MustCompile(t, &tt.filter, tt.schema)
			if got := m.Match(tt.ev); got != tt.want {
				t.Fatalf("Match() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatch_LongValues(t *testing.T) {
	// A long event value with a near-miss pattern must still be decided
	// correctly (and in linear time).
	hay := strings.Repeat("a", 100000)
	tests := []struct {
		name   string
		value  string
		needle string
		want   bool
	}{
		{"NearMiss", hay, strings.Repeat("A", 511) + "b", false},
		{"AtEnd", hay + "b", strings.Repeat("A", 511) + "B", true},
		{"UnicodeAtEnd", strings.Repeat("ä", 50000) + "ß", "Äß", true},
		{"UnicodeMiss", strings.Repeat("ä", 50000), "äa", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{many("StringContains", "data.v", `"`+tt.needle+`"`)}}
			m := MustCompile(t, f, eventgrid.EventGridSchema)
			if got := m.Match(egEvent(`{"v":"` + tt.value + `"}`)); got != tt.want {
				t.Fatalf("Match() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatch_NilMatcher(t *testing.T) {
	var m *filter.Matcher
	if !m.Match(egEvent(`{}`)) {
		t.Fatal("nil Matcher did not match")
	}
}

func TestMatch_FoldAgreesWithEqualFold(t *testing.T) {
	words := []string{"", "a", "A", "k", "K", "\u212A", "s", "S", "\u017F", "ß", "SS", "Ä", "ä", "ÄBC", "äbc",
		"Σ", "σ", "ς", "ǅ", "ǆ", "Ǆ", "İ", "i", "ı", "\xff", "\ufffd", "a\xffb", "日本", "ꭰ", "Ꭰ", "kſä", "ab\u212Aſ"}
	for _, a := range words {
		for _, b := range words {
			// json.Marshal turns invalid UTF-8 into U+FFFD, as a decoder would.
			body, _ := json.Marshal(map[string]any{"data": map[string]string{"v": a}})
			q, _ := json.Marshal(b)
			ra, rb := []rune(strings.ToValidUTF8(a, "\ufffd")), []rune(strings.ToValidUTF8(b, "\ufffd"))
			eq := func(i int) bool { return strings.EqualFold(string(ra[i:i+len(rb)]), string(rb)) }
			contains := false
			for i := 0; i+len(rb) <= len(ra); i++ {
				contains = contains || eq(i)
			}
			for op, want := range map[string]bool{
				"StringIn":         len(ra) == len(rb) && eq(0),
				"StringBeginsWith": len(ra) >= len(rb) && eq(0),
				"StringEndsWith":   len(ra) >= len(rb) && eq(len(ra)-len(rb)),
				"StringContains":   contains,
			} {
				f := &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{many(op, "data.v", string(q))}}
				m := MustCompile(t, f, eventgrid.EventGridSchema)
				if got := m.Match(&eventgrid.Event{Body: body}); got != want {
					t.Errorf("%s %q on %q = %v, want %v", op, b, a, got, want)
				}
			}
		}
	}
}

func TestMatch_SharedKeyPrefixes(t *testing.T) {
	deep := `{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":"deep","k":5}}}}}}}}}, "x": {"y": 1, "z": "s"}}`
	ev := &eventgrid.Event{Body: []byte(`{"data":` + deep + `,"Data":"shadow"}`)}
	path := "data.a.b.c.d.e.f.g.h.i."
	tests := []struct {
		name string
		afs  []eventgrid.AdvancedFilter
		want bool
	}{
		{"AllMatch", []eventgrid.AdvancedFilter{
			many("StringIn", path+"j", `"DEEP"`), one("NumberIn", path+"k", "5"), one("NumberIn", "data.x.y", "1"),
			many("StringIn", "data.x.z", `"S"`), one("NumberGreaterThan", path+"k", "4"), many("StringIn", path+"j", `"deep"`),
		}, true},
		{"LastFails", []eventgrid.AdvancedFilter{
			many("StringIn", path+"j", `"DEEP"`), one("NumberIn", path+"k", "5"), one("NumberIn", "data.x.y", "2"),
		}, false},
		{"SiblingMissing", []eventgrid.AdvancedFilter{
			one("NumberIn", path+"k", "5"), many("StringIn", path+"missing", `"x"`),
		}, false},
		{"ExactCaseIsDistinct", []eventgrid.AdvancedFilter{
			many("StringIn", "Data", `"shadow"`), one("NumberIn", "data.x.y", "1"),
		}, true},
		{"FoldedCaseSharesNothing", []eventgrid.AdvancedFilter{
			one("NumberIn", "DATA.X.Y", "1"), one("NumberIn", "data.x.y", "1"), one("NumberIn", "Data.x.y", "1"),
		}, false}, // "Data" resolves to the exact key "Data", a string, not to "data"
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every order of the same filters gives the same answer.
			for r := range len(tt.afs) {
				afs := append(append([]eventgrid.AdvancedFilter{}, tt.afs[r:]...), tt.afs[:r]...)
				m := MustCompile(t, &eventgrid.Filter{AdvancedFilters: afs}, eventgrid.CustomEventSchema)
				if got := m.Match(ev); got != tt.want {
					t.Fatalf("rotation %d: Match() = %v, want %v", r, got, tt.want)
				}
			}
		})
	}
}

// ReadsBody: only advanced filters read an event's body; the type and
// subject filters read its fields.
func TestMatcher_ReadsBody(t *testing.T) {
	var none *filter.Matcher
	fields := MustCompile(t, &eventgrid.Filter{IncludedEventTypes: []string{"T"}, SubjectBeginsWith: "/a"}, eventgrid.EventGridSchema)
	advanced := MustCompile(t, &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
		{OperatorType: "NumberGreaterThan", Key: "data.n", Value: json.RawMessage(`1`)}}}, eventgrid.EventGridSchema)
	if none.ReadsBody() || fields.ReadsBody() || !advanced.ReadsBody() {
		t.Errorf("ReadsBody: no filter %v, type and subject %v, advanced %v; want false, false, true",
			none.ReadsBody(), fields.ReadsBody(), advanced.ReadsBody())
	}
}
