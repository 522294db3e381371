package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printTable writes the results as a table, then each scenario's title,
// target and notes.
func printTable(w io.Writer, results []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tevents\tevents/s\tp50 ms\tp95 ms\tp99 ms\tbroker CPU s/1k ev\tbench CPU s\tother load\tRSS MB\tpeak RSS MB\t503s\ttarget\t")
	for _, r := range results {
		evs, p50, p95, p99 := "-", "-", "-", "-"
		if r.EventsPerSecond > 0 {
			evs = fmt.Sprintf("%.0f", r.EventsPerSecond)
		}
		if r.Latency.Samples > 0 {
			p50 = fmt.Sprintf("%.2f", r.Latency.P50)
			p95 = fmt.Sprintf("%.2f", r.Latency.P95)
			p99 = fmt.Sprintf("%.2f", r.Latency.P99)
		}
		events := r.Received
		if r.Scenario == "e" {
			events = r.Publish.Accepted
		}
		target := "-"
		switch {
		case r.Error != "":
			target = "ERROR"
		case r.Met != nil && *r.Met:
			target = "met"
		case r.Met != nil:
			target = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%.4f\t%.1f\t%.2f\t%.1f\t%.1f\t%d\t%s\t\n",
			r.Scenario, events, evs, p50, p95, p99, r.CPUPer1000, r.BenchCPU, r.OtherCores,
			float64(r.RSS)/mb, float64(r.PeakRSS)/mb, r.Publish.Rejected, target)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range results {
		fmt.Fprintf(w, "%s: %s", r.Scenario, r.Title)
		if r.Target != "" {
			fmt.Fprintf(w, " [target %s]", r.Target)
		}
		fmt.Fprintln(w)
		if r.Error != "" {
			fmt.Fprintf(w, "   error: %s\n", firstLine(r.Error))
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "   %s\n", n)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
