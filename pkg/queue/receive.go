package queue

import (
	"context"
	"time"

	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// takeLocked locks up to max available events.
func (q *queue) takeLocked(now time.Time, max int, out []Received, fx *effects) []Received {
	if !q.pausedSince.IsZero() {
		return out // paused: as if none were available
	}
	lock := q.lockDuration()
	var tokens tokenSource
	if out == nil && q.nAvail > 0 {
		out = make([]Received, 0, min(max, q.nAvail)) // not grown from one, seven times for a hundred
	}
	for len(out) < max && q.head != nil {
		e := q.head
		q.unlinkLocked(e)
		if !now.Before(e.expires) {
			q.finishLocked(e, outcome.TimeToLiveExceeded, now, fx)
			continue
		}
		e.count++
		e.state = locked
		e.token = tokens.next(min(max-len(out), q.nAvail+1))
		e.lockedAt = now
		e.lockUntil = now.Add(lock)
		q.tokens[e.token] = e
		q.locks.add(e)
		out = append(out, Received{LockToken: e.token, DeliveryCount: e.count, LockedUntil: e.lockUntil, Body: e.body})
	}
	return out
}

// receiving is one receive across its attempts to take events.
type receiving struct {
	max   int
	wait  time.Duration
	w     *waiter     // once it waits
	timer clock.Timer // ends its wait
}

// receive takes up to max available events. When there are none it waits
// up to wait, in the queue's waiting list, until it is woken for an event,
// the wait ends (an empty answer) or ctx is done.
func (q *queue) receive(ctx context.Context, max int, wait time.Duration) ([]Received, error) {
	r := &receiving{max: max, wait: wait}
	defer func() {
		if r.timer != nil {
			r.timer.Stop()
			q.s.waiting.Add(-1)
		}
	}()
	for {
		out, waiting, err := q.attempt(r)
		if !waiting {
			return out, err
		}
		select {
		case <-r.w.ch:
		case <-ctx.Done():
			q.mu.Lock()
			q.leaveLocked(r.w)
			q.wakeLocked() // an event it was woken for goes to another
			q.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}

// attempt takes available events for r, or puts r in the waiting list and
// reports that it waits.
func (q *queue) attempt(r *receiving) (out []Received, waiting bool, err error) {
	var fx effects
	q.mu.Lock()
	wasWoken := r.w != nil && q.leaveLocked(r.w)
	if q.closed {
		err := q.closedErrorLocked()
		q.mu.Unlock()
		return nil, false, err
	}
	now := q.s.opts.Clock.Now()
	q.lastReceive = now
	q.expireLocked(now, &fx) // events past their time to live are not handed out
	out = q.takeLocked(now, r.max, nil, &fx)
	q.armLocked(now)
	switch {
	case len(out) > 0 || r.wait <= 0 || (r.w != nil && r.w.expired.Load()):
		// Events this receive made available (expired locks, delays that
		// have passed) and did not take go to the next waiters.
		q.wakeLocked()
	case r.w == nil && !q.s.enterWait():
		err = q.s.tooManyWaiting()
	default:
		if r.w == nil {
			w := newWaiter()
			r.w, r.timer = w, q.s.opts.Clock.AfterFunc(r.wait, func() { w.expired.Store(true); w.signal() })
		}
		q.joinLocked(r.w, wasWoken)
		waiting = true
	}
	sub := q.sub
	q.mu.Unlock()
	if len(out) > 0 {
		q.out.Report(&outcome.Record{Kind: outcome.Started, Sub: sub, Time: now, Events: len(out)})
	}
	q.apply(sub, now, &fx)
	return out, waiting, err
}

// closedErrorLocked is what a receive gets from a closed queue: nothing
// while the broker stops, and otherwise why the subscription has no queue.
func (q *queue) closedErrorLocked() error {
	switch {
	case q.closeReason == outcome.Shutdown:
		return nil // an empty answer
	case !q.sub.IsQueue():
		return notQueue(q.sub) // it delivers by push now
	}
	return missing(q.sub)
}
