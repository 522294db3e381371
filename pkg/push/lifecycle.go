package push

import (
	"context"
	"fmt"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// SubscriptionPut implements eventgrid.SubscriptionObserver: it creates the
// subscription's queue or applies new settings to the events it holds.
func (e *Engine) SubscriptionPut(sub *eventgrid.EventSubscription) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if q, ok := e.queues[sub.UID]; ok {
		q.update(sub)
		return
	}
	q := newQueue(e, sub)
	if sub.Owner.Declared() && sub.Paused {
		q.mu.Lock()
		q.setPausedLocked(true, e.clock.Now())
		q.mu.Unlock()
	}
	e.queues[sub.UID] = q
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: it detaches
// the subscription's queue, whose events, queued or in flight, leave the
// budget at once; a worker counts and logs them, outside the caller's locks.
func (e *Engine) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	e.mu.Lock()
	q, ok := e.queues[sub.UID]
	delete(e.queues, sub.UID)
	e.mu.Unlock()
	if !ok {
		return
	}
	if d := q.detach(outcome.SubscriptionDeleted); d != nil {
		e.sched.Lock()
		if e.stopping {
			e.sched.Unlock()
			d.report() // Close is waiting for the workers; nothing else will
			return
		}
		e.discards = append(e.discards, d)
		e.wakeLocked()
		e.sched.Unlock()
	}
}

// Close stops delivery: workers take no new batches, requests in flight get
// until ctx is done to finish (then they are cancelled), and the events
// still queued are discarded, logged with their number and counted as
// dropped (shutdown), as nothing is persisted by design. No goroutine or
// timer of the engine runs once it has returned. It returns an error when
// requests in flight had to be cancelled. Later calls do nothing.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	queues := make([]*queue, 0, len(e.queues))
	for _, q := range e.queues {
		queues = append(queues, q)
	}
	e.mu.Unlock()
	for _, q := range queues {
		q.stop() // no more timers, no more scheduling
	}
	e.stopWatch()
	e.sched.Lock()
	e.stopping = true
	pending := e.discards
	e.discards = nil
	e.wakeAllLocked()
	e.sched.Unlock()

	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		if n := e.inFlight.Load(); n > 0 {
			err = fmt.Errorf("delivery: %d requests still in flight at the stop timeout were cancelled", n)
		}
		e.cancelSends()
		<-done
	}
	e.cancelSends()
	n := 0
	for _, d := range pending {
		d.report()
	}
	for _, q := range queues {
		if d := q.detach(outcome.Shutdown); d != nil {
			n += d.report()
		}
	}
	e.log.Info().Int("discarded", n).Msg("delivery stopped; queued events are not persisted by design")
	return err
}

// update applies a subscription's new settings; they take effect for the
// events already queued from their next attempt on.
func (q *queue) update(sub *eventgrid.EventSubscription) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.setSubLocked(sub)
	if sub.Owner.Declared() {
		// The declaration rules whether it is paused; an update over
		// the REST API keeps what :pause and :resume did.
		q.setPausedLocked(sub.Paused, q.e.clock.Now())
	}
	q.scheduleLocked()
}

// stop ends the queue's timers and scheduling for good: the engine is
// stopping.
func (q *queue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.stopTimersLocked()
}

func (q *queue) stopTimersLocked() {
	if q.timer != nil {
		q.timer.Stop()
	}
	q.timerAt = 0
}

// discard is what a detached queue leaves to report: how many events it
// discarded, and why.
type discard struct {
	q      *queue
	sub    *eventgrid.EventSubscription
	reason outcome.Reason
	n      int
}

// detach empties the queue for good, returning its events to the budget at
// once, those in flight included (their batches finish without counting
// them again), and returns what is left to report, or nil if the queue was
// already detached. It only does arithmetic under the lock; report tells.
func (q *queue) detach(reason outcome.Reason) *discard {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	q.stopTimersLocked()
	d := &discard{q: q, sub: q.sub, reason: reason}
	release := func(it item) {
		d.n++
		q.releaseItem(&it)
	}
	q.ready.clear(release)
	q.takeWaitingLocked(release)
	for _, b := range q.flying {
		for i := range b.items {
			d.n++
			q.releaseItem(&b.items[i])
		}
		b.released = true
	}
	return d
}

// report tells the discarded events, and closes the subscription's
// reporter. It returns how many events were discarded.
func (d *discard) report() int {
	d.q.out.Report(&outcome.Record{Kind: outcome.Discarded, Sub: d.sub, Reason: d.reason, Events: d.n})
	d.q.out.Close()
	return d.n
}
