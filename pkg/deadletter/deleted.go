package deadletter

import (
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

var _ eventgrid.SubscriptionObserver = (*Writer)(nil)

// SubscriptionPut implements eventgrid.SubscriptionObserver; it does
// nothing: letters take the subscription they were given with.
func (w *Writer) SubscriptionPut(*eventgrid.EventSubscription) {}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: the
// deleted subscription's waiting letters stop counting against the queue
// budget at once (their Done is called), so that letters waiting for
// unreachable storage never keep the budget of a subscription that is
// gone. They are still written, at once, as storage takes them; at the
// first failed write the rest are dropped, with a log line and a counter,
// rather than kept in memory that no budget counts.
func (w *Writer) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	w.mu.Lock()
	p := w.pending[sub.UID]
	if p == nil {
		w.mu.Unlock()
		return
	}
	if len(p.letters) == 0 {
		delete(w.pending, sub.UID)
		w.mu.Unlock()
		return
	}
	p.deleted = true
	p.next = time.Now()
	done := make([]func(), len(p.letters))
	for i, l := range p.letters {
		done[i] = l.Done
	}
	w.mu.Unlock()
	for _, d := range done {
		d()
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// once returns f made safe to call more than once: its first call calls f.
func once(f func()) func() {
	if f == nil {
		return func() {}
	}
	var o sync.Once
	return func() { o.Do(f) }
}
