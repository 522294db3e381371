package inspect

import (
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
	// Attempts is the attempts made (queue subscriptions: times received).
	Attempts int
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

// Oldest picks the top oldest of the events offered to it, by the time they
// were accepted, keeping at most top at any time: a delivery mode scans
// its queue under its lock with it, asking Wants before it makes a
// Waiting, and reads the result with Sorted once the lock is released.
type Oldest struct {
	top  int
	keep oldestHeap // a max-heap by Enqueued: the newest kept is first
}

// NewOldest returns a picker of the top oldest events.
func NewOldest(top int) *Oldest { return &Oldest{top: max(top, 0)} }

// Wants reports whether an event accepted at t would be kept.
func (o *Oldest) Wants(t time.Time) bool {
	return len(o.keep) < o.top || (o.top > 0 && t.Before(o.keep[0].Enqueued))
}

// Add offers w; it is kept if it is among the top oldest so far.
func (o *Oldest) Add(w Waiting) {
	if !o.Wants(w.Enqueued) {
		return
	}
	if len(o.keep) == o.top {
		heap.Pop(&o.keep)
	}
	heap.Push(&o.keep, w)
}

// Sorted returns the events kept, oldest first.
func (o *Oldest) Sorted() []Waiting {
	out := []Waiting(o.keep)
	slices.SortStableFunc(out, func(a, b Waiting) int { return a.Enqueued.Compare(b.Enqueued) })
	return out
}

type oldestHeap []Waiting

func (h oldestHeap) Len() int           { return len(h) }
func (h oldestHeap) Less(i, j int) bool { return h[j].Enqueued.Before(h[i].Enqueued) }
func (h oldestHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *oldestHeap) Push(x any)        { *h = append(*h, x.(Waiting)) }
func (h *oldestHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = Waiting{}
	*h = old[:len(old)-1]
	return w
}
