package inspect

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// TestHistory_Bytes measures a subscription's history: within 4 KiB
// (docs/console.md#history), whatever its traffic, since it is made of
// fixed-size arrays.
func TestHistory_Bytes(t *testing.T) {
	sub, topic := unsafe.Sizeof(subHistory{}), unsafe.Sizeof(topicHistory{})
	t.Logf("history: %d bytes per subscription, %d per topic", sub, topic)
	if sub > 4096 {
		t.Errorf("a subscription's history takes %d bytes, more than 4 KiB", sub)
	}
}

// TestHistory_LatencyWithinTenPercent: a bucket stands for every duration
// in it to within 10 %, from a microsecond to an hour.
func TestHistory_LatencyWithinTenPercent(t *testing.T) {
	for d := time.Microsecond; d <= time.Hour; d = d*21/20 + 1 {
		got := latencyMs(latencyCode(d))
		want := float64(d) / float64(time.Millisecond)
		if math.Abs(got-want)/want > 0.1 {
			t.Fatalf("%v is reported as %v ms", d, got)
		}
	}
	if latencyCode(100*24*time.Hour) != latencyBuckets || latencyCode(0) != 1 {
		t.Error("durations beyond the buckets are not clamped")
	}
}

func TestHistory_Subscription(t *testing.T) {
	clk := fakeclock.New() // fakeclock.Start is on an interval boundary
	var h subHistory
	h.init(clk.Now())
	at := func(d time.Duration) time.Time { return clk.Now().Add(d) }

	h.attempted(at(time.Second), 3, 0, 2*time.Millisecond)
	h.attempted(at(2*time.Second), 0, 2, 200*time.Millisecond)
	h.gaveUp(at(3 * time.Second))
	h.sample(at(5*time.Second), 7) // the first interval ends with 7 held
	h.attempted(at(12*time.Second), 1, 0, -1)

	s := h.snapshot(at(13*time.Second), 4)
	last := Points - 1
	if want := startOf(intervalOf(at(13*time.Second)) - Points + 1); !s.Start.Equal(want) {
		t.Errorf("Start = %v, want %v", s.Start, want)
	}
	first := last - 2 // the interval the record was made in
	checks := []struct {
		name      string
		got, want uint32
	}{
		{"delivered", s.Delivered[first], 3}, {"failed", s.Failed[first], 2}, {"givenUp", s.GivenUp[first], 1},
		{"queued at the end of the first", s.Queued[first], 7},
		{"queued carried over an empty interval", s.Queued[last-1], 7},
		{"queued now", s.Queued[last], 4}, {"delivered now", s.Delivered[last], 1},
		{"nothing before the record", s.Delivered[first-1] + s.Queued[first-1], 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	// Two requests: the median is the faster one, the 99th percentile the
	// slower one; an interval without requests, and the current one whose
	// only attempt made no request, have none.
	if p50, p99 := s.LatencyP50Ms[first], s.LatencyP99Ms[first]; math.Abs(p50-2)/2 > 0.1 || math.Abs(p99-200)/200 > 0.1 {
		t.Errorf("latencies %v, %v; want about 2 and 200 ms", p50, p99)
	}
	for _, i := range []int{first - 1, last - 1, last} {
		if !math.IsNaN(s.LatencyP50Ms[i]) || !math.IsNaN(s.LatencyP99Ms[i]) {
			t.Errorf("interval %d has latencies %v, %v; want none", i, s.LatencyP50Ms[i], s.LatencyP99Ms[i])
		}
	}

	// Fifteen minutes after the last attempt its interval has rolled out.
	s = h.snapshot(at(12*time.Second+15*time.Minute), 0)
	for i := range Points {
		if s.Delivered[i] != 0 || s.Failed[i] != 0 || s.GivenUp[i] != 0 {
			t.Fatalf("interval %d still counts events after 15 minutes: %+v", i, s)
		}
	}
	if s.Queued[last-1] != 7 {
		t.Errorf("queued %d, want the last sampled count carried", s.Queued[last-1])
	}
}

func TestHistory_Topic(t *testing.T) {
	clk := fakeclock.New()
	var h topicHistory
	h.init(clk.Now())
	h.published(clk.Now(), 10, 2)
	h.published(clk.Now().Add(7*time.Second), 5, 0)
	s := h.snapshot(clk.Now().Add(8 * time.Second))
	if s.Received[Points-2] != 10 || s.Unmatched[Points-2] != 2 || s.Received[Points-1] != 5 {
		t.Errorf("received %v, unmatched %v", s.Received[Points-3:], s.Unmatched[Points-3:])
	}
}

// BenchmarkHistory_Attempted is what every delivery request adds to the
// hot path; it reports the history's bytes per subscription too.
func BenchmarkHistory_Attempted(b *testing.B) {
	var h subHistory
	now := time.Now()
	h.init(now)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.attempted(now.Add(time.Duration(i)*time.Microsecond), 1, 0, 3*time.Millisecond)
	}
	// After the loop: its start resets the metrics reported before it.
	b.ReportMetric(float64(unsafe.Sizeof(h)), "history-bytes/subscription")
}
