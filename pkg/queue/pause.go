package queue

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// What an operator does to a queue subscription
// (docs/delivery.md#pause-and-resume, docs/delivery.md#purge): pause and
// resume it, and purge the events it holds. While it is paused a receive
// hands out nothing, and waits as it would for an empty queue; events
// keep arriving, locks keep expiring and settlements keep working, and
// events still outlive their time to live.

// Pause pauses (paused true) or resumes sub at the store's now, and returns
// since when it is paused, zero once resumed; pausing a paused
// subscription keeps its time. Resuming wakes the receives waiting. ok is
// false when the store has no queue for sub.
func (s *Store) Pause(sub *eventgrid.EventSubscription, paused bool) (since time.Time, ok bool) {
	q := s.lookup(sub)
	if q == nil {
		return time.Time{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.setPausedLocked(paused, s.opts.Clock.Now())
	return q.pausedSince, true
}

// setPausedLocked pauses or resumes the queue at now.
func (q *queue) setPausedLocked(paused bool, now time.Time) {
	switch {
	case paused == !q.pausedSince.IsZero():
	case paused:
		q.pausedSince = now
	default:
		q.pausedSince = time.Time{}
		q.wakeLocked()
	}
}

// Purge removes the events of sub's queue that are available or delayed,
// not those locked by a receiver, which count as dropped with the reason
// Purged, and returns how many it removed; ok is false when the store has
// no queue for sub.
func (s *Store) Purge(sub *eventgrid.EventSubscription) (purged int, ok bool) {
	q := s.lookup(sub)
	if q == nil {
		return 0, false
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return 0, true
	}
	for e := q.head; e != nil; e = q.head {
		q.unlinkLocked(e)
		q.gone(e)
		purged++
	}
	for e := q.delays.first(); e != nil; e = q.delays.first() {
		q.delays.remove(e)
		q.ttl.remove(e)
		q.gone(e)
		purged++
	}
	sub = q.sub
	q.mu.Unlock()
	if purged > 0 {
		q.out.Report(&outcome.Record{Kind: outcome.Discarded, Sub: sub, Time: s.opts.Clock.Now(), Reason: outcome.Purged, Events: purged})
	}
	return purged, true
}

// gone releases e, which has left the queue undelivered.
func (q *queue) gone(e *entry) {
	e.state = gone
	q.release(e)
}
