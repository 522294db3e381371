package filter_test

import (
	"fmt"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// benchData makes the canonical EventGridSchema body about 1 KB.
const benchData = `{"deviceId":"sensor-0042","site":"Building 7 / Floor 3 / Room 312","model":"TH-9000",` +
	`"firmware":"4.12.7","temperature":21.75,"humidity":48.2,"pressure":1013.25,"battery":87,` +
	`"online":true,"alarm":false,"status":"Operating normally","tags":["hvac","east-wing","critical"],` +
	`"location":{"lat":47.6423,"lon":-122.1391,"alt":12.5,"zone":"EAST"},` +
	`"readings":{"co2":612,"voc":0.41,"pm25":8.1,"noise":38.5,"light":430},` +
	`"owner":{"team":"Facilities","contact":"facilities-oncall@example.com","priority":"P2"},` +
	`"window":{"start":"2020-01-01T00:00:00Z","end":"2020-01-01T00:05:00Z","samples":300},` +
	`"note":"Routine telemetry sample emitted every five minutes by the building management gateway ` +
	`on behalf of the east wing sensors; no operator action is required at this time (auto).",` +
	`"seq":918273645,"checksum":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}`

func benchFilters(n int) []eventgrid.AdvancedFilter {
	base := []eventgrid.AdvancedFilter{
		one("NumberGreaterThan", "data.temperature", "20.5"),
		many("StringIn", "data.location.zone", `"west"`, `"east"`),
		one("BoolEquals", "data.online", "true"),
		many("NumberIn", "data.battery", "85", "86", "87"),
		many("StringContains", "data.status", `"NORMALLY"`),
		many("StringBeginsWith", "data.owner.contact", `"facilities"`),
		one("NumberLessThanOrEquals", "data.readings.co2", "1000"),
		many("StringEndsWith", "data.site", `"room 312"`),
		many("NumberNotIn", "data.seq", "1", "2", "3"),
		many("StringNotIn", "data.model", `"th-1000"`, `"th-2000"`),
	}
	afs := make([]eventgrid.AdvancedFilter, n)
	for i := range afs {
		afs[i] = base[i%len(base)]
	}
	return afs
}

func BenchmarkMatch(b *testing.B) {
	ev := egEvent(benchData)
	ev.Type, ev.Subject = "Building.Telemetry", "/sites/b7/floors/3/sensors/sensor-0042"
	if len(ev.Body) < 950 || len(ev.Body) > 1100 {
		b.Fatalf("event body is %d bytes, want about 1 KB", len(ev.Body))
	}
	benchmarks := []struct {
		name   string
		filter *eventgrid.Filter
	}{
		{"NoFilter", nil},
		{"TypesAndSubject", &eventgrid.Filter{
			IncludedEventTypes: []string{"Building.Alarm", "building.telemetry"},
			SubjectBeginsWith:  "/SITES/b7/", SubjectEndsWith: "sensor-0042"}},
		{"Advanced5", &eventgrid.Filter{AdvancedFilters: benchFilters(5)}},
		{"Advanced25", &eventgrid.Filter{AdvancedFilters: benchFilters(25)}},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			m := MustCompile(b, bm.filter, eventgrid.EventGridSchema)
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

func TestMatch_Allocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	ev := egEvent(benchData)
	ev.Type, ev.Subject = "Building.Telemetry", "/sites/b7/floors/3/sensors/sensor-0042"
	for _, n := range []int{5, 25} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := MustCompile(t, &eventgrid.Filter{IncludedEventTypes: []string{"building.telemetry"},
				SubjectBeginsWith: "/SITES", AdvancedFilters: benchFilters(n)}, eventgrid.EventGridSchema)
			if allocs := testing.AllocsPerRun(100, func() { m.Match(ev) }); allocs != 0 {
				t.Fatalf("Match allocates %v times per call, want 0", allocs)
			}
		})
	}
}
