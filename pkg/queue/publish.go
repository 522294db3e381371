package queue

import (
	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// Share returns sub's share of the broker's budget, which the publish path
// claims before it enqueues sub's events; nil when the store has no queue
// for sub (deleted, or a push subscription). Once the store is closed it
// returns EUnavailable.
func (s *Store) Share(sub *eventgrid.EventSubscription) (*budget.Share, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	if q := s.queues[sub.UID]; q != nil {
		return &q.share, nil
	}
	return nil, nil
}

var errClosed = eventgrid.Errorf(eventgrid.EUnavailable, "The broker is shutting down.")

// Enqueue queues bodies at the back of c.Sub's queue, one event each, whose
// room the caller reserved under h, in c.Share (see budget.Budget.Reserve),
// and wakes the receives waiting there. The bodies are kept; the slice is
// not. When the queue is gone (deleted, replaced since c.Share was taken,
// or the store closed) the events are released and counted as dropped.
func (s *Store) Enqueue(c budget.Claim, bodies [][]byte, h *budget.Hold) {
	s.mu.RLock()
	q := s.queues[c.Sub.UID]
	closed := s.closed
	s.mu.RUnlock()
	if q != nil && &q.share == c.Share && q.enqueue(bodies, h) {
		return
	}
	for _, body := range bodies {
		h.Release(c.Share, int64(len(body)))
	}
	reason := outcome.SubscriptionDeleted
	if closed {
		reason = outcome.Shutdown
	}
	s.rep.Report(&outcome.Record{Kind: outcome.Discarded, Sub: c.Sub, Reason: reason, Events: len(bodies)})
}

// enqueue adds an entry per body, unless the queue is closed.
func (q *queue) enqueue(bodies [][]byte, h *budget.Hold) bool {
	entries := make([]entry, len(bodies)) // one allocation for the request's events
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	ttl := q.s.scale(q.sub.Queue.EventTimeToLive)
	for i, body := range bodies {
		e := &entries[i]
		q.seq++
		*e = entry{body: body, hold: h, published: h.Accepted, expires: h.Accepted.Add(ttl), seq: q.seq, lockIdx: -1, delayIdx: -1, ttlIdx: -1}
		q.pushBackLocked(e)
	}
	q.armLocked(q.s.opts.Clock.Now())
	q.wakeLocked()
	return true
}
