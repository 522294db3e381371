package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// A comparison is a ratio between two scenarios of the same round, which
// the targets are stated in: the broker against the bare relay in events
// per second (a/ar, b/br), and pull against batched push in the broker's
// CPU per 1,000 events (g/b, and g/bc with push converting as pull does). On a shared machine one run's ratio moves by
// a tenth or more from run to run, so -rounds runs the scenarios several
// times over and reports each ratio's median besides the rounds' values.
type comparison struct {
	name, of, against string
	// cpu compares CPU seconds per 1,000 events (lower is better);
	// otherwise events per second (higher is better).
	cpu bool
	// target is the ratio the bar sets: at least target for
	// events per second, at most target for CPU.
	target float64
	// aside: the ratio is reported, and its median judged, but the
	// scenario's own verdict stays that of the comparison before it.
	aside bool
}

var comparisons = []comparison{
	{name: "a/ar", of: "a", against: "ar", target: 0.9},
	{name: "b/br", of: "b", against: "br", target: 0.9},
	{name: "g/b", of: "g", against: "b", cpu: true, target: 1.2},
	// Pull against push with the same conversion to CloudEvents: what the
	// receive and acknowledge cost beyond push delivery, on the same bar.
	{name: "g/bc", of: "g", against: "bc", cpu: true, target: 1.2, aside: true},
	// A redrive of the events given up on costs no more than publishing
	// them (docs/delivery.md#redrive).
	{name: "m/mp", of: "m", against: "mp", cpu: true, target: 1.0},
}

func (c comparison) met(ratio float64) bool {
	if c.cpu {
		return ratio <= c.target
	}
	return ratio >= c.target
}

func (c comparison) bar() string {
	if c.cpu {
		return fmt.Sprintf("%s CPU per 1,000 events <= %.1fx %s", c.of, c.target, c.against)
	}
	return fmt.Sprintf("%s >= %.1fx %s", c.of, c.target, c.against)
}

// ratioSummary is one comparison over the rounds.
type ratioSummary struct {
	Name   string    `json:"name"`
	Target string    `json:"target"`
	Rounds []float64 `json:"per_round"`
	Median float64   `json:"median"`
	Met    bool      `json:"median_met"`
}

// compare judges the comparisons whose two scenarios are among one
// round's results, noting each ratio on the scenario compared against,
// and returns the ratios found by comparison name.
func compare(results []result) map[string]float64 {
	find := func(name string) *result {
		for i := range results {
			if r := &results[i]; r.Scenario == name && r.Error == "" && r.EventsPerSecond > 0 && r.CPUPer1000 > 0 {
				return r
			}
		}
		return nil
	}
	found := map[string]float64{}
	for _, c := range comparisons {
		of, against := find(c.of), find(c.against)
		if of == nil || against == nil {
			continue
		}
		var ratio float64
		if c.cpu {
			ratio = of.CPUPer1000 / against.CPUPer1000
			of.detail("cpu_vs_"+c.against, ratio)
			of.note("broker CPU %.4f s per 1,000 events = %.2fx %s's %.4f s", of.CPUPer1000, ratio, c.against, against.CPUPer1000)
			if !c.aside {
				of.judge(c.bar(), c.met(ratio))
			}
		} else {
			ratio = of.EventsPerSecond / against.EventsPerSecond
			against.detail("broker_vs_relay", ratio)
			against.note("broker (%s) %.0f events/s = %.2fx this relay; broker CPU %.4f s vs relay %.4f s per 1,000 events",
				c.of, of.EventsPerSecond, ratio, of.CPUPer1000, against.CPUPer1000)
			against.judge(c.bar(), c.met(ratio))
		}
		found[c.name] = ratio
	}
	return found
}

// summarizeRatios gathers each comparison's ratios over the rounds, in
// order, and their median.
func summarizeRatios(rounds []map[string]float64) []ratioSummary {
	var out []ratioSummary
	for _, c := range comparisons {
		var vals []float64
		for _, r := range rounds {
			if v, ok := r[c.name]; ok {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			continue
		}
		m := median(vals)
		out = append(out, ratioSummary{Name: c.name, Target: c.bar(), Rounds: vals, Median: m, Met: c.met(m)})
	}
	return out
}

// median returns the middle value of vals, or the mean of the two middle
// ones.
func median(vals []float64) float64 {
	v := slices.Clone(vals)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// printRatios writes one line per comparison: the rounds' ratios and
// their median, judged against the target.
func printRatios(w io.Writer, sums []ratioSummary) {
	for _, s := range sums {
		vals := make([]string, len(s.Rounds))
		for i, v := range s.Rounds {
			vals[i] = fmt.Sprintf("%.2f", v)
		}
		verdict := "MISSED"
		if s.Met {
			verdict = "met"
		}
		fmt.Fprintf(w, "%s: %s; median %.2f over %d round(s) [%s: %s]\n", s.Name, strings.Join(vals, " "), s.Median, len(s.Rounds), s.Target, verdict)
	}
}
