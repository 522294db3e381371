package queue

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// expireLocked processes what is due at now: expired locks, delayed
// releases whose delay has passed, and events past their time to live.
func (q *queue) expireLocked(now time.Time, fx *effects) {
	for e := q.locks.first(); e != nil && !now.Before(e.lockUntil); e = q.locks.first() {
		fx.expired.add(e)
		e.outcome = lockExpired
		q.unlockLocked(e, now, 0, fx)
		if e.state == available {
			fx.requeued++
			q.noteLocked(fx, e, errLockExpired, time.Time{})
		}
	}
	for e := q.delays.first(); e != nil && !now.Before(e.readyAt); e = q.delays.first() {
		q.delays.remove(e)
		q.ttl.remove(e)
		if !now.Before(e.expires) {
			q.finishLocked(e, outcome.TimeToLiveExceeded, now, fx)
			continue
		}
		q.pushBackLocked(e)
	}
	for e := q.ttl.first(); e != nil && !now.Before(e.expires); e = q.ttl.first() {
		if e.state == delayed {
			q.delays.remove(e)
			q.ttl.remove(e)
		} else {
			q.unlinkLocked(e)
		}
		q.finishLocked(e, outcome.TimeToLiveExceeded, now, fx)
	}
}

// armLocked sets the queue's timer for its next due time.
func (q *queue) armLocked(now time.Time) {
	var next time.Time
	if e := q.locks.first(); e != nil {
		next = e.lockUntil
	}
	if e := q.delays.first(); e != nil && (next.IsZero() || e.readyAt.Before(next)) {
		next = e.readyAt
	}
	if e := q.ttl.first(); e != nil && (next.IsZero() || e.expires.Before(next)) {
		next = e.expires
	}
	if next.IsZero() || q.closed {
		return
	}
	if q.timer != nil && !q.timerAt.After(next) {
		return // it fires first, and re-arms
	}
	if q.timer != nil {
		q.timer.Stop()
	}
	q.timerAt = next
	q.timer = q.s.opts.Clock.AfterFunc(max(next.Sub(now), 0), q.onTimer)
}

func (q *queue) onTimer() {
	var fx effects
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.timer = nil
	now := q.s.opts.Clock.Now()
	q.expireLocked(now, &fx)
	q.armLocked(now)
	q.wakeLocked()
	sub := q.sub
	q.mu.Unlock()
	q.apply(sub, now, &fx)
}
