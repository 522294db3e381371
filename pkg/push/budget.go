package push

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// Share returns sub's share of the broker's budget, which the publish path
// claims before it enqueues sub's events; nil when the engine has no queue
// for sub (deleted, or a queue subscription). Once the engine is closed it
// returns EUnavailable.
func (e *Engine) Share(sub *eventgrid.EventSubscription) (*budget.Share, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, errClosed
	}
	if q := e.queues[sub.UID]; q != nil {
		return &q.share, nil
	}
	return nil, nil
}

var errClosed = eventgrid.Errorf(eventgrid.EUnavailable, "The broker is shutting down.")

// Enqueue queues bodies for c.Sub, one delivery each, whose room the
// caller reserved under h, in c.Share (see budget.Budget.Reserve). The
// bodies are kept; the slice is not. When the subscription's queue is gone
// (deleted, or replaced since c.Share was taken) or the engine has stopped,
// the deliveries are released and counted as dropped. It never blocks on
// delivery and is safe for concurrent use.
func (e *Engine) Enqueue(c budget.Claim, bodies [][]byte, h *budget.Hold) {
	e.mu.RLock()
	q := e.queues[c.Sub.UID]
	closed := e.closed
	e.mu.RUnlock()
	pushed := 0
	if q != nil && !closed && &q.share == c.Share {
		pushed = q.pushAll(bodies, h)
	}
	if n := len(bodies) - pushed; n > 0 {
		for _, body := range bodies[pushed:] {
			h.Release(c.Share, int64(len(body)))
		}
		reason := outcome.SubscriptionDeleted
		if closed {
			reason = outcome.Shutdown
		}
		e.rep.Report(&outcome.Record{Kind: outcome.Discarded, Sub: c.Sub, Reason: reason, Events: n})
	}
	if pushed > 0 {
		q.kick()
	}
}

// releaseItem returns it to the budget and the subscription's share.
func (q *queue) releaseItem(it *item) {
	it.s.Release(&q.share, int64(len(it.body)))
}

// deliveredItem returns it, which its subscriber took at now, to the budget
// and the subscription's share: the room publish requests held for room
// wait for (see budget.Budget.ReserveWithin).
func (q *queue) deliveredItem(it *item, now time.Time) {
	it.s.Delivered(&q.share, int64(len(it.body)), now)
}
