package pull

import (
	"context"
	"sync/atomic"
	"time"
)

// waiter is one receive waiting for events.
type waiter struct {
	ch      chan struct{}
	expired atomic.Bool
}

func (w *waiter) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

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
		out = append(out, Received{LockToken: e.token, DeliveryCount: e.count, Body: e.body})
	}
	return out
}

func (q *queue) receive(ctx context.Context, max int, wait time.Duration) ([]Received, error) {
	var (
		w     *waiter
		timer Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var fx effects
		q.mu.Lock()
		if w != nil {
			delete(q.waiters, w)
		}
		if q.closed {
			sub, reason := q.sub, q.closeReason
			q.mu.Unlock()
			if reason == ReasonShutdown {
				return nil, nil // the broker is stopping: an empty answer
			}
			return nil, missing(sub)
		}
		now := q.s.opts.Clock.Now()
		q.expireLocked(now, &fx) // events past their time to live are not handed out
		out := q.takeLocked(now, max, nil, &fx)
		if len(out) > 0 {
			q.armLocked(now)
		}
		if len(out) > 0 || wait <= 0 || (w != nil && w.expired.Load()) {
			sub := q.sub
			q.mu.Unlock()
			q.apply(sub, &fx)
			if len(out) > 0 {
				q.s.opts.Metrics.Received(sub, len(out))
			}
			return out, nil
		}
		if w == nil {
			w = &waiter{ch: make(chan struct{}, 1)}
			ww := w
			timer = q.s.opts.Clock.AfterFunc(wait, func() { ww.expired.Store(true); ww.wake() })
		}
		q.waiters[w] = struct{}{}
		sub := q.sub
		q.mu.Unlock()
		q.apply(sub, &fx)
		select {
		case <-w.ch:
		case <-ctx.Done():
			q.mu.Lock()
			delete(q.waiters, w)
			q.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}

// wakeLocked tells the waiting receives that events are available.
func (q *queue) wakeLocked() {
	for w := range q.waiters {
		w.wake()
		delete(q.waiters, w)
	}
}
