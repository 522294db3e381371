package queue

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// effects are what a change under the queue's lock leaves to report after
// it (package outcome): the attempts that ended (events acknowledged,
// released, or whose lock expired), each event's outcome for those
// watching, and the events given up on.
type effects struct {
	acked, released, expired attempt
	// requeued is how many of the expired locks' events are available
	// again; the others were past their delivery count or time to live.
	requeued int
	outs     []outcome.Event
	gaveUp   []outcome.Record
}

// attempt counts the events whose attempt ended one way, and the largest
// of their delivery counts.
type attempt struct{ events, count int }

func (a *attempt) add(e *entry) {
	a.events++
	a.count = max(a.count, e.count)
}

// apply reports fx. sub is the subscription as it was under the lock, now
// the time of the change.
func (q *queue) apply(sub *eventgrid.EventSubscription, now time.Time, fx *effects) {
	rec := outcome.Record{Kind: outcome.Attempted, Sub: sub, Time: now, Latency: -1, Outcomes: fx.outs}
	for _, a := range [...]struct {
		attempt
		failed  bool
		err     error
		expired int
	}{
		{fx.acked, false, nil, 0},
		{fx.released, true, errReleased, 0},
		{fx.expired, true, errLockExpired, fx.expired.events},
	} {
		if a.events == 0 {
			continue
		}
		rec.Events, rec.Attempt, rec.Err, rec.Expired, rec.Failed = a.events, a.count, a.err, a.expired, 0
		if a.failed {
			rec.Failed = a.events
		}
		if a.expired > 0 {
			rec.Requeued = fx.requeued
		}
		q.out.Report(&rec)
		rec.Outcomes = nil // told once, with the first record
	}
	for i := range fx.gaveUp {
		q.out.Report(&fx.gaveUp[i])
	}
}
