package inspect

import (
	"math"
	"sync"
	"time"
)

// A history covers Points intervals of Interval: the last 15 minutes.
// Intervals start on multiples of Interval of the clock.
const (
	Interval = 5 * time.Second
	Points   = 180
)

// intervalOf returns the number of the interval t falls in.
func intervalOf(t time.Time) int64 { return t.UnixNano() / int64(Interval) }

// startOf returns when interval n starts.
func startOf(n int64) time.Time { return time.Unix(0, n*int64(Interval)).UTC() }

func slot(n int64) int { return int(n % Points) }

// Request durations are kept per interval in logarithmic buckets: bucket 1
// holds durations up to latencyBase, bucket k > 1 those in
// (latencyBase·r^(k-2), latencyBase·r^(k-1)], r = latencyRatio, up to
// latencyBuckets (longer ones count in the last). A bucket reports its
// geometric middle, within sqrt(1.2)-1 < 10 % of any duration in it.
const (
	latencyBase    = 0.001 // ms
	latencyRatio   = 1.2
	latencyBuckets = 128 // the last starts near 3 hours
)

var logRatio = math.Log(latencyRatio)

// latencyCode returns the bucket of d, 1 to latencyBuckets.
func latencyCode(d time.Duration) uint8 {
	ms := float64(d) / float64(time.Millisecond)
	if ms <= latencyBase {
		return 1
	}
	k := int(math.Ceil(math.Log(ms/latencyBase)/logRatio)) + 1
	return uint8(min(max(k, 2), latencyBuckets))
}

// latencyMs returns the duration a bucket stands for, in milliseconds,
// rounded to 100 ns; NaN for code 0, no duration.
func latencyMs(code uint8) float64 {
	switch code {
	case 0:
		return math.NaN()
	case 1:
		return latencyBase
	}
	v := latencyBase * math.Pow(latencyRatio, float64(code)-1.5)
	return math.Round(v*1e4) / 1e4
}

// subHistory is one subscription's history, in under 4 KiB (see
// HistoryBytes): a ring of Points slots, the current one at slot(cur),
// and the current interval's request durations by bucket.
type subHistory struct {
	mu   sync.Mutex
	born int64 // the interval the record was created in
	cur  int64 // the interval of the current slot

	delivered, failed, givenUp, queued [Points]uint32
	p50, p99                           [Points]uint8 // latency codes, 0 where no request ended
	lat                                [latencyBuckets]uint32
	latN                               uint32
}

func (h *subHistory) init(now time.Time) {
	h.born = intervalOf(now)
	h.cur = h.born
}

// advanceLocked makes interval n the current one: the intervals it passes
// are closed (their percentiles computed) or emptied, and keep the last
// queued count until a sample says otherwise.
func (h *subHistory) advanceLocked(n int64) {
	if n <= h.cur {
		return // the current interval, or a clock that went back
	}
	s := slot(h.cur)
	h.p50[s], h.p99[s] = h.percentilesLocked()
	clear(h.lat[:])
	h.latN = 0
	q := h.queued[s]
	for k := int64(1); k <= min(n-h.cur, Points); k++ {
		i := slot(h.cur + k)
		h.delivered[i], h.failed[i], h.givenUp[i], h.p50[i], h.p99[i] = 0, 0, 0, 0, 0
		h.queued[i] = q
	}
	h.cur = n
}

// percentilesLocked returns the codes of the median and the 99th
// percentile of the current interval's durations.
func (h *subHistory) percentilesLocked() (p50, p99 uint8) {
	if h.latN == 0 {
		return 0, 0
	}
	r50 := (h.latN + 1) / 2
	r99 := uint32(math.Ceil(float64(h.latN) * 0.99))
	var seen uint32
	for i, n := range h.lat {
		seen += n
		if p50 == 0 && seen >= r50 {
			p50 = uint8(i + 1)
		}
		if seen >= r99 {
			return p50, uint8(i + 1)
		}
	}
	return p50, latencyBuckets
}

// attempted records one attempt's events and, when took >= 0, the
// duration of its request.
func (h *subHistory) attempted(at time.Time, delivered, failed int, took time.Duration) {
	h.mu.Lock()
	h.advanceLocked(intervalOf(at))
	s := slot(h.cur)
	h.delivered[s] = addSat(h.delivered[s], delivered)
	h.failed[s] = addSat(h.failed[s], failed)
	if took >= 0 {
		h.lat[latencyCode(took)-1]++
		h.latN++
	}
	h.mu.Unlock()
}

func (h *subHistory) gaveUp(at time.Time) {
	h.mu.Lock()
	h.advanceLocked(intervalOf(at))
	s := slot(h.cur)
	h.givenUp[s] = addSat(h.givenUp[s], 1)
	h.mu.Unlock()
}

// sample records the events held at now: the count at the end of the
// interval that just ended, when now is the start of a new one, and for now
// the current one's.
func (h *subHistory) sample(now time.Time, held int) {
	n := intervalOf(now)
	h.mu.Lock()
	moved := n > h.cur
	h.advanceLocked(n)
	h.queued[slot(n)] = addSat(0, held)
	if moved && n-1 >= h.born {
		h.queued[slot(n-1)] = addSat(0, held)
	}
	h.mu.Unlock()
}

// SubHistory is a subscription's history: Points intervals of Interval from
// Start, oldest first, the last one the current, partial interval.
type SubHistory struct {
	Start                              time.Time
	Delivered, Failed, GivenUp, Queued [Points]uint32
	LatencyP50Ms, LatencyP99Ms         [Points]float64 // NaN where no request ended
}

func (h *subHistory) snapshot(now time.Time, held int) SubHistory {
	n := intervalOf(now)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.advanceLocked(n)
	first := h.cur - Points + 1
	out := SubHistory{Start: startOf(first)}
	for k := range Points {
		i := slot(first + int64(k))
		out.Delivered[k], out.Failed[k], out.GivenUp[k], out.Queued[k] = h.delivered[i], h.failed[i], h.givenUp[i], h.queued[i]
		out.LatencyP50Ms[k], out.LatencyP99Ms[k] = latencyMs(h.p50[i]), latencyMs(h.p99[i])
	}
	p50, p99 := h.percentilesLocked()
	out.LatencyP50Ms[Points-1], out.LatencyP99Ms[Points-1] = latencyMs(p50), latencyMs(p99)
	out.Queued[Points-1] = addSat(0, held)
	return out
}

// topicHistory is one topic's history.
type topicHistory struct {
	mu                  sync.Mutex
	cur                 int64
	received, unmatched [Points]uint32
}

func (h *topicHistory) init(now time.Time) { h.cur = intervalOf(now) }

func (h *topicHistory) advanceLocked(n int64) {
	if n <= h.cur {
		return
	}
	for k := int64(1); k <= min(n-h.cur, Points); k++ {
		i := slot(h.cur + k)
		h.received[i], h.unmatched[i] = 0, 0
	}
	h.cur = n
}

func (h *topicHistory) published(at time.Time, received, unmatched int) {
	h.mu.Lock()
	h.advanceLocked(intervalOf(at))
	s := slot(h.cur)
	h.received[s] = addSat(h.received[s], received)
	h.unmatched[s] = addSat(h.unmatched[s], unmatched)
	h.mu.Unlock()
}

// TopicHistory is a topic's history, laid out as SubHistory's.
type TopicHistory struct {
	Start               time.Time
	Received, Unmatched [Points]uint32
}

func (h *topicHistory) snapshot(now time.Time) TopicHistory {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.advanceLocked(intervalOf(now))
	first := h.cur - Points + 1
	out := TopicHistory{Start: startOf(first)}
	for k := range Points {
		i := slot(first + int64(k))
		out.Received[k], out.Unmatched[k] = h.received[i], h.unmatched[i]
	}
	return out
}

// addSat returns v+n, saturated at the bounds of uint32.
func addSat(v uint32, n int) uint32 {
	s := int64(v) + int64(n)
	return uint32(min(max(s, 0), math.MaxUint32))
}
