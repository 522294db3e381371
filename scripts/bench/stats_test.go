package main

import "testing"

func TestPercentile(t *testing.T) {
	ten := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(i + 1)
	}
	tests := []struct {
		name   string
		sorted []int64
		p      float64
		want   int64
	}{
		{"Empty", nil, 50, 0},
		{"One", []int64{7}, 99, 7},
		{"MedianOfTen", ten, 50, 5},
		{"P95OfTen", ten, 95, 10},
		{"P90OfTen", ten, 90, 9},
		{"P99OfHundred", hundred, 99, 99},
		{"P99.9OfHundred", hundred, 99.9, 100},
		{"P1OfHundred", hundred, 1, 1},
		{"Max", hundred, 100, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Fatalf("percentile(%v) = %d, want %d", tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	samples := []int64{3e6, 1e6, 2e6, 4e6} // unsorted, in ns
	got := summarize(samples)
	want := latencySummary{Samples: 4, P50: 2, P95: 4, P99: 4, Max: 4}
	if got != want {
		t.Fatalf("summarize() = %+v, want %+v", got, want)
	}
}
