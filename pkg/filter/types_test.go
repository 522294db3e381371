package filter_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
)

func TestCompile_IncludedEventTypesLimit(t *testing.T) {
	types := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("Contoso.Type", i)
		}
		return out
	}
	if _, err := filter.Compile(&eventgrid.Filter{IncludedEventTypes: types(1000)}, eventgrid.EventGridSchema, filter.DefaultLimits); err != nil {
		t.Fatalf("1000 event types (the default limit): %v", err)
	}
	_, err := filter.Compile(&eventgrid.Filter{IncludedEventTypes: types(1001)}, eventgrid.EventGridSchema, filter.Limits{})
	if eventgrid.ErrorCode(err) != eventgrid.EInvalidFilter ||
		eventgrid.ErrorMessage(err) != "filter.includedEventTypes: 1001 event types exceed the limit of 1000 per subscription (api__filterLimits__maxIncludedEventTypes)" {
		t.Fatalf("1001 event types: %v", err)
	}
	if _, err := filter.Compile(&eventgrid.Filter{IncludedEventTypes: types(6)}, eventgrid.CloudEventSchemaV1_0, filter.Limits{MaxIncludedEventTypes: 5}); err == nil {
		t.Fatal("6 event types accepted with a limit of 5")
	}
}

// Many included event types match as a few do: case-insensitively, under
// Unicode folding, and "all" anywhere in the list means every type.
func TestMatch_ManyIncludedEventTypes(t *testing.T) {
	list := []string{"Straße.ſensor", "\u212aelvin"}
	for i := range 998 {
		list = append(list, fmt.Sprint("Contoso.Items.Type", i))
	}
	m := MustCompile(t, &eventgrid.Filter{IncludedEventTypes: list}, eventgrid.EventGridSchema)
	for typ, want := range map[string]bool{
		"contoso.items.type0": true, "CONTOSO.ITEMS.TYPE997": true, "Contoso.Items.Type998": false,
		"STRASSE.SENSOR": false, "straße.Sensor": true, "kelvin": true, "": false, "Contoso.Items.Type": false,
	} {
		if got := m.Match(subjectEvent(typ, "/s")); got != want {
			t.Errorf("Match(type %q) = %v, want %v", typ, got, want)
		}
	}
	all := MustCompile(t, &eventgrid.Filter{IncludedEventTypes: append(list[:999:999], "ALL")}, eventgrid.EventGridSchema)
	if !all.Match(subjectEvent("anything", "/s")) {
		t.Error(`"all" in a long list does not match every type`)
	}
	if !raceEnabled {
		ev := subjectEvent(strings.Repeat("Contoso.Items.Type5", 20), "/s")
		if n := testing.AllocsPerRun(100, func() { m.Match(ev) }); n != 0 {
			t.Errorf("Match allocates %v times per call with a long event type, want 0", n)
		}
	}
}

// BenchmarkMatchIncludedEventTypes shows that the cost of includedEventTypes
// does not grow with the list.
func BenchmarkMatchIncludedEventTypes(b *testing.B) {
	for _, n := range []int{1, 10, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			list := make([]string, n)
			for i := range list {
				list[i] = fmt.Sprint("Contoso.Items.Type", i)
			}
			m := MustCompile(b, &eventgrid.Filter{IncludedEventTypes: list}, eventgrid.EventGridSchema)
			ev := subjectEvent(fmt.Sprint("contoso.items.type", n-1), "/s")
			b.ReportAllocs()
			for b.Loop() {
				if !m.Match(ev) {
					b.Fatal("no match")
				}
			}
		})
	}
}
