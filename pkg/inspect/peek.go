package inspect

import (
	"cmp"
	"container/heap"
	"slices"
	"time"
)

// Where a held event waits, as a peek names it.
const (
	// Push subscriptions.
	QueueReady     = "ready"
	QueueBackoff1  = "backoff1"
	QueueBackoff2  = "backoff2"
	QueueScheduled = "scheduled"
	QueueInFlight  = "inFlight"
	// Queue subscriptions.
	QueueAvailable = "available"
	QueueLocked    = "locked"
	QueueDelayed   = "delayed"
)

// Waiting is one event a subscription holds, as a peek shows it.
type Waiting struct {
	// Body is the event as the subscription receives it, shared with the
	// queue: it must not be modified.
	Body []byte
	// Queue is where it waits (Queue* constants).
	Queue string
	// Attempts is the attempts made (queue subscriptions: times received),
	// of at most MaxAttempts (retryPolicy.maxDeliveryAttempts; queue
	// subscriptions: maxDeliveryCount).
	Attempts, MaxAttempts int
	// Seq orders the events accepted at the same time, a request's, as
	// they were queued: a delivery mode numbers the events it queues.
	Seq uint64
	// Enqueued is when the broker accepted the event; Next when it is
	// tried again (push) or its lock or delay ends (queue), zero for none.
	Enqueued, Next time.Time
	// LastError says why its last attempt failed, when one did.
	LastError string
}

// Peek is a bounded copy of the first events a subscription holds, oldest
// first, and how many it holds in all.
type Peek struct {
	Events []Waiting
	Total  int
}

// MaxPeekBytes bounds the events one peek shows: its answer holds the
// oldest events up to this many bytes, and says it was truncated when more
// would have fitted its top.
const MaxPeekBytes = 4 << 20

// Oldest picks the top oldest of the events offered to it, by the time they
// were accepted, then by their Seq (so a request's events show in their
// order, wherever each waits), then by the order they were offered in,
// keeping at most
// top at any time and, of those, no more than the oldest whose bodies fit
// MaxPeekBytes and the one after them, which tells that the bound was
// reached: a delivery mode scans its queue under its lock with it, asking
// Wants before it makes a Waiting, and reads the result with Sorted once
// the lock is released. So a peek's copy holds what its answer shows, and
// no more, however large the events.
type Oldest struct {
	top   int
	seq   int
	bytes int        // of the bodies kept
	keep  oldestHeap // a max-heap: the newest kept is first
}

// NewOldest returns a picker of the top oldest events.
func NewOldest(top int) *Oldest { return &Oldest{top: max(top, 0)} }

// Wants reports whether an event accepted at t, numbered seq, would be
// kept.
func (o *Oldest) Wants(t time.Time, seq uint64) bool {
	if o.top == 0 {
		return false
	}
	if !o.full() {
		return true
	}
	newest := &o.keep[0].w
	if c := t.Compare(newest.Enqueued); c != 0 {
		return c < 0
	}
	return seq < newest.Seq
}

// full reports whether an event newer than every one kept would not be:
// top are kept, or the bodies kept pass MaxPeekBytes.
func (o *Oldest) full() bool { return len(o.keep) >= o.top || o.bytes > MaxPeekBytes }

// Add offers w; it is kept if it is among the top oldest so far, and its
// body within MaxPeekBytes of the older ones'.
func (o *Oldest) Add(w Waiting) {
	if !o.Wants(w.Enqueued, w.Seq) {
		return
	}
	o.seq++
	heap.Push(&o.keep, offered{w, o.seq})
	o.bytes += len(w.Body)
	// Newer events beyond the top, or whose older ones' bodies alone pass
	// the bound, are never shown.
	for len(o.keep) > o.top || len(o.keep) > 1 && o.bytes-len(o.keep[0].w.Body) > MaxPeekBytes {
		o.bytes -= len(o.keep[0].w.Body)
		heap.Pop(&o.keep)
	}
}

// Sorted returns the events kept, oldest first.
func (o *Oldest) Sorted() []Waiting {
	slices.SortFunc(o.keep, func(a, b offered) int { return a.compare(&b) })
	out := make([]Waiting, len(o.keep))
	for i, k := range o.keep {
		out[i] = k.w
	}
	return out
}

type offered struct {
	w   Waiting
	seq int
}

// compare orders a before b when it was accepted earlier, then by Seq,
// then when it was offered earlier.
func (a *offered) compare(b *offered) int {
	if c := a.w.Enqueued.Compare(b.w.Enqueued); c != 0 {
		return c
	}
	if c := cmp.Compare(a.w.Seq, b.w.Seq); c != 0 {
		return c
	}
	return a.seq - b.seq
}

type oldestHeap []offered

func (h oldestHeap) Len() int           { return len(h) }
func (h oldestHeap) Less(i, j int) bool { return h[i].compare(&h[j]) > 0 }
func (h oldestHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *oldestHeap) Push(x any)        { *h = append(*h, x.(offered)) }
func (h *oldestHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = offered{}
	*h = old[:len(old)-1]
	return w
}
