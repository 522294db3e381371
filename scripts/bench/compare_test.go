package main

import (
	"math"
	"testing"
)

func near(x, y float64) bool { return math.Abs(x-y) < 1e-9 }

// TestCompare: a round's ratios are taken between the scenarios that ran
// in it, judged on the scenario they are noted on, and summarized over the
// rounds by their median.
func TestCompare(t *testing.T) {
	round := func(a, ar, bCPU, gCPU float64) []result {
		return []result{
			{Scenario: "a", EventsPerSecond: a, CPUPer1000: 0.08},
			{Scenario: "ar", EventsPerSecond: ar, CPUPer1000: 0.07},
			{Scenario: "b", EventsPerSecond: 200000, CPUPer1000: bCPU},
			{Scenario: "g", EventsPerSecond: 150000, CPUPer1000: gCPU},
		}
	}
	r1 := round(9000, 10000, 0.005, 0.0055)
	got1 := compare(r1)
	if !near(got1["a/ar"], 0.9) || !near(got1["g/b"], 1.1) {
		t.Fatalf("ratios %v", got1)
	}
	if _, ok := got1["b/br"]; ok {
		t.Fatalf("b/br without br: %v", got1)
	}
	if r1[1].Met == nil || !*r1[1].Met || r1[3].Met == nil || !*r1[3].Met {
		t.Fatalf("judgements: ar %v, g %v", r1[1].Met, r1[3].Met)
	}
	r2 := round(8000, 10000, 0.005, 0.0065)
	got2 := compare(r2)
	if *r2[1].Met || *r2[3].Met {
		t.Fatalf("0.8x relay and 1.3x b judged met")
	}
	r3 := round(8500, 10000, 0.005, 0.006)
	sums := summarizeRatios([]map[string]float64{got1, got2, compare(r3)})
	if len(sums) != 2 {
		t.Fatalf("summaries %+v", sums)
	}
	for _, s := range sums {
		switch s.Name {
		case "a/ar":
			if len(s.Rounds) != 3 || !near(s.Rounds[1], 0.8) || !near(s.Median, 0.85) || s.Met {
				t.Fatalf("a/ar %+v", s)
			}
		case "g/b":
			if !near(s.Median, 1.2) || !s.Met {
				t.Fatalf("g/b %+v", s)
			}
		default:
			t.Fatalf("summary %+v", s)
		}
	}
	if m := median([]float64{3, 1, 2, 4}); m != 2.5 {
		t.Fatalf("median of 1-4: %v", m)
	}
}

// g/bc is reported beside g/b, but g keeps g/b's verdict: the bar.
func TestCompare_AsideKeepsTheVerdict(t *testing.T) {
	rs := []result{
		{Scenario: "b", EventsPerSecond: 200000, CPUPer1000: 0.004},
		{Scenario: "bc", EventsPerSecond: 180000, CPUPer1000: 0.005},
		{Scenario: "g", EventsPerSecond: 150000, CPUPer1000: 0.0052},
	}
	got := compare(rs)
	if !near(got["g/b"], 1.3) || !near(got["g/bc"], 1.04) {
		t.Fatalf("ratios %v", got)
	}
	if g := rs[2]; g.Met == nil || *g.Met || g.Target != (comparison{of: "g", against: "b", cpu: true, target: 1.2}).bar() {
		t.Fatalf("g judged %v against %q; want g/b's miss", g.Met, g.Target)
	}
	sums := summarizeRatios([]map[string]float64{got})
	if len(sums) != 2 || sums[1].Name != "g/bc" || !sums[1].Met {
		t.Fatalf("summaries %+v", sums)
	}
}
