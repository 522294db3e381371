package pull

import (
	"context"
	"time"
)

// takeLocked locks up to max available events.
func (q *queue) takeLocked(now time.Time, max int, out []Received, fx *effects) []Received {
	lock := q.lockDuration()
	var tokens tokenSource
	for len(out) < max && q.head != nil {
		e := q.head
		q.unlinkLocked(e)
		if !now.Before(e.expires) {
			q.finishLocked(e, ReasonTimeToLive, fx)
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

// receive takes up to max available events. When there are none it waits
// up to wait, in the queue's waiting list, until it is woken for an event,
// the wait ends (an empty answer) or ctx is done.
func (q *queue) receive(ctx context.Context, max int, wait time.Duration) ([]Received, error) {
	var (
		w     *waiter
		timer Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
			q.s.waiting.Add(-1)
		}
	}()
	for {
		var fx effects
		q.mu.Lock()
		wasWoken := w != nil && q.leaveLocked(w)
		if q.closed {
			err := q.closedErrorLocked()
			q.mu.Unlock()
			return nil, err
		}
		now := q.s.opts.Clock.Now()
		q.expireLocked(now, &fx) // events past their time to live are not handed out
		out := q.takeLocked(now, max, nil, &fx)
		q.armLocked(now)
		if len(out) > 0 || wait <= 0 || (w != nil && w.expired.Load()) {
			// Events this receive made available (expired locks, delays
			// that have passed) and did not take go to the next waiters.
			q.wakeLocked()
			sub := q.sub
			q.mu.Unlock()
			q.apply(sub, &fx)
			if len(out) > 0 {
				q.s.opts.Metrics.Received(sub, len(out))
			}
			return out, nil
		}
		if w == nil {
			if !q.s.enterWait() {
				sub := q.sub
				q.mu.Unlock()
				q.apply(sub, &fx)
				return nil, q.s.tooManyWaiting()
			}
			w = newWaiter()
			ww := w
			timer = q.s.opts.Clock.AfterFunc(wait, func() { ww.expired.Store(true); ww.signal() })
		}
		q.joinLocked(w, wasWoken)
		sub := q.sub
		q.mu.Unlock()
		q.apply(sub, &fx)
		select {
		case <-w.ch:
		case <-ctx.Done():
			q.mu.Lock()
			q.leaveLocked(w)
			q.wakeLocked() // an event it was woken for goes to another
			q.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}

// closedErrorLocked is what a receive gets from a closed queue: nothing
// while the broker stops, and otherwise why the subscription has no queue.
func (q *queue) closedErrorLocked() error {
	switch {
	case q.closeReason == ReasonShutdown:
		return nil // an empty answer
	case !q.sub.IsQueue():
		return notQueue(q.sub) // it delivers by push now
	}
	return missing(q.sub)
}
