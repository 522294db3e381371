package main

import (
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of the sorted values
// by the nearest-rank method: the smallest value with at least p percent of
// the values at or below it. It returns 0 for no values.
func percentile(sorted []int64, p float64) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// rank = ceil(p/100 * n), computed in integers to avoid float error at
	// exact boundaries such as p=50, n=10.
	rank := int((int64(p*1000)*int64(n) + 100000 - 1) / 100000)
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// latencySummary holds latency percentiles in milliseconds.
type latencySummary struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50_ms"`
	P95     float64 `json:"p95_ms"`
	P99     float64 `json:"p99_ms"`
	Max     float64 `json:"max_ms"`
}

// summarize sorts samples (nanoseconds) in place and returns their
// percentiles.
func summarize(samples []int64) latencySummary {
	slices.Sort(samples)
	ms := func(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }
	s := latencySummary{Samples: len(samples)}
	if len(samples) == 0 {
		return s
	}
	s.P50 = ms(percentile(samples, 50))
	s.P95 = ms(percentile(samples, 95))
	s.P99 = ms(percentile(samples, 99))
	s.Max = ms(samples[len(samples)-1])
	return s
}
