package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

func TestBatchBody(t *testing.T) {
	tests := []struct {
		name       string
		k, size    int
		wantSize   int // bytes per event
		wantEvents int
	}{
		{"OneKB", 1, 1024, 1024, 1},
		{"Batch", 100, 1024, 1024, 100},
		{"SmallerThanFixed", 3, 10, evFixed, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBatchBody(tt.k, tt.size)
			const stamp = int64(1767225600123456789)
			b.stamp(41, stamp)
			var evs []json.RawMessage
			if err := json.Unmarshal(b.buf, &evs); err != nil {
				t.Fatalf("body is not a JSON array: %v", err)
			}
			if len(evs) != tt.wantEvents {
				t.Fatalf("%d events, want %d", len(evs), tt.wantEvents)
			}
			for i, raw := range evs {
				if len(raw) != tt.wantSize {
					t.Fatalf("event %d is %d bytes, want %d", i, len(raw), tt.wantSize)
				}
				var ev struct {
					ID   string
					Data struct{ BT int64 }
				}
				if err := json.Unmarshal(raw, &ev); err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf("%012d", 41+i); ev.ID != want || ev.Data.BT != stamp {
					t.Fatalf("event %d: id %q, bt %d; want %q, %d", i, ev.ID, ev.Data.BT, want, stamp)
				}
			}
			lat, unstamped := latencies(b.buf, stamp+5, nil)
			if len(lat) != tt.wantEvents || unstamped != 0 {
				t.Fatalf("latencies() found %d stamps and %d unstamped, want %d and 0", len(lat), unstamped, tt.wantEvents)
			}
		})
	}
}

func TestLatencies(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		want          []int64
		wantUnstamped int64
	}{
		{"Delivered", `[{"id":"1","topic":"bench","data":{"bt":100,"pad":"x"},"metadataVersion":"1"},{"data":{"bt":250}}]`, []int64{900, 750}, 0},
		{"SpaceAfterColon", `[{"data":{"bt": 400}}]`, []int64{600}, 0},
		{"NotANumber", `[{"data":{"bt":"x"}}]`, nil, 1},
		{"NoEvents", `[]`, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unstamped := latencies([]byte(tt.body), 1000, nil)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || unstamped != tt.wantUnstamped {
				t.Fatalf("latencies() = %v, %d; want %v, %d", got, unstamped, tt.want, tt.wantUnstamped)
			}
		})
	}
}

func TestPutDigits(t *testing.T) {
	tests := []struct {
		name  string
		width int
		v     int64
		want  string
	}{
		{"Padded", 6, 42, "000042"},
		{"Exact", 3, 999, "999"},
		{"Overflow", 2, 1234, "34"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := make([]byte, tt.width)
			putDigits(b, tt.v)
			if string(b) != tt.want {
				t.Fatalf("putDigits() = %q, want %q", b, tt.want)
			}
		})
	}
}
