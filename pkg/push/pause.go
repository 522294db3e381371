package push

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// What an operator does to a subscription's delivery
// (docs/delivery.md#pause-and-resume, docs/delivery.md#purge): pause and
// resume it, and purge the events it holds. A paused queue sends nothing:
// no batch is taken and the queue waits in no run queue; requests in flight
// finish. Its events keep arriving within the budget, and still expire:
// while it is paused, the queue's timer also wakes when the oldest ready
// event outlives its time to live, and that event is given up on as it
// would have been when taken.

// minExpirySweep is the least time between two looks for expired events
// while a queue is paused: each look reads every ready event.
const minExpirySweep = 100 * time.Millisecond

func (q *queue) paused() bool { return !q.pausedSince.IsZero() }

// Pause pauses (paused true) or resumes sub's delivery at now, and returns
// since when it is paused, zero once resumed; pausing a paused
// subscription keeps its time. ok is false when the engine has no queue
// for sub.
func (e *Engine) Pause(sub *eventgrid.EventSubscription, paused bool) (since time.Time, ok bool) {
	q := e.queueOf(sub)
	if q == nil {
		return time.Time{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.setPausedLocked(paused, e.clock.Now())
	return q.pausedSince, true
}

// setPausedLocked pauses or resumes the queue at now.
func (q *queue) setPausedLocked(paused bool, now time.Time) {
	switch {
	case paused == q.paused():
		return
	case paused:
		q.pausedSince = now
		q.expireAt = q.nextExpiryLocked(now)
	default:
		q.pausedSince, q.expireAt = time.Time{}, 0
		q.scheduleLocked()
	}
	q.armLocked(q.e.nanos(now))
}

// watchExpiryLocked sets, while the queue is paused, when its first ready
// event expires, if that was not set: events were made ready or queued
// since the queue held none ready.
func (q *queue) watchExpiryLocked(now time.Time) {
	if q.paused() && q.expireAt == 0 {
		q.expireAt = q.nextExpiryLocked(now)
	}
}

// expireWhilePausedLocked gives up, at now, on the ready events that
// outlived their time to live, into b, and sets when the next one does.
func (q *queue) expireWhilePausedLocked(now time.Time, b *taken) {
	if q.expireAt == 0 || q.e.nanos(now) < q.expireAt {
		return
	}
	for range q.ready.len() {
		it := q.ready.pop()
		if now.Sub(it.s.Accepted) > q.pol.TTL {
			q.dropLocked(it, outcome.TimeToLiveExceeded, now, b)
			continue
		}
		q.ready.push(it)
	}
	q.expireAt = q.nextExpiryLocked(now)
}

// nextExpiryLocked returns when the first ready event outlives its time to
// live, in ns since Engine.epoch, minExpirySweep after now at the soonest;
// 0 when none is ready. Events waiting to be retried are ready before they
// expire (their retry policy saw to that), and are looked at once they are
// (promoteLocked).
func (q *queue) nextExpiryLocked(now time.Time) int64 {
	var first time.Time
	q.ready.each(func(it *item) {
		if first.IsZero() || it.s.Accepted.Before(first) {
			first = it.s.Accepted
		}
	})
	if first.IsZero() {
		return 0
	}
	// An event expires once its age is beyond the time to live.
	return max(q.e.nanos(first.Add(q.pol.TTL+1)), q.e.nanos(now.Add(minExpirySweep)))
}

// Purge removes the events sub's queue holds that are not in flight (ready,
// in back-off, scheduled), which count as dropped with the reason Purged,
// and returns how many it removed; ok is false when the engine has no queue
// for sub.
func (e *Engine) Purge(sub *eventgrid.EventSubscription) (purged int, ok bool) {
	q := e.queueOf(sub)
	if q == nil {
		return 0, false
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return 0, true
	}
	drop := func(it item) {
		purged++
		q.releaseItem(&it)
	}
	q.ready.clear(drop)
	q.takeWaitingLocked(drop)
	q.expireAt = 0
	sub = q.sub
	q.mu.Unlock()
	if purged > 0 {
		q.out.Report(&outcome.Record{Kind: outcome.Discarded, Sub: sub, Time: e.clock.Now(), Reason: outcome.Purged, Events: purged})
	}
	return purged, true
}

// wall returns the wall-clock time ns (since Engine.epoch) stands for.
// The engine keeps due times as monotonic durations since its epoch, and
// every view of one (a peek, the outcome stream, a given-up entry) turns
// it into a time the same way, from the epoch's wall-clock time, so that
// the same moment reads the same everywhere. A wall clock stepped since
// (a gateway's clock set by NTP after it booted, say), found when now
// disagrees by more than a millisecond, moves that base once, so that
// times keep agreeing with the clock that stamps acceptances.
func (e *Engine) wall(ns int64, now time.Time) time.Time {
	base := e.wallBase.Load()
	if skew := now.UnixNano() - (base + e.nanos(now)); skew > int64(time.Millisecond) || skew < -int64(time.Millisecond) {
		base += skew
		e.wallBase.Store(base)
	}
	return time.Unix(0, base+ns)
}
