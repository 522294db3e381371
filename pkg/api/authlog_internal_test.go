package api

import (
	"testing"
	"time"
)

// The limiter lets one event through per interval and reports how many it
// held back since the last one it let through.
func TestLogLimiter(t *testing.T) {
	l := logLimiter{interval: 10 * time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		at             time.Duration
		ok             bool
		wantSuppressed int
	}{
		{0, true, 0},
		{time.Second, false, 0},
		{5 * time.Second, false, 0},
		{9999 * time.Millisecond, false, 0},
		{10 * time.Second, true, 3},
		{11 * time.Second, false, 0},
		{time.Minute, true, 1},
		{2 * time.Minute, true, 0},
	} {
		suppressed, ok := l.allow(t0.Add(tt.at))
		if ok != tt.ok || suppressed != tt.wantSuppressed {
			t.Errorf("at %v: %d, %v; want %d, %v", tt.at, suppressed, ok, tt.wantSuppressed, tt.ok)
		}
	}
}
