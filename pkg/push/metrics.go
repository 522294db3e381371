package push

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// QueueStats describes one subscription's queue at one moment.
type QueueStats struct {
	Subscription *eventgrid.EventSubscription
	// Ready events wait for their next attempt now; Backoff[0] and
	// Backoff[1] wait in the two EdgeQueues back-off lists, Scheduled on
	// the CloudExponential schedule; InFlight requests are being sent, of
	// at most ConcurrencyLimit.
	Ready            int
	Backoff          [2]int
	Scheduled        int
	InFlight         int
	ConcurrencyLimit int
	// ProbationUntil is when the subscription's probation ends; zero
	// when it is not on probation.
	ProbationUntil time.Time
	// LastFailure and LastError describe the most recent failed attempt;
	// Failures counts the failed attempts since the last success.
	LastFailure time.Time
	LastError   string
	Failures    int
	// NextAttempt is when the earliest event waiting to be retried is due;
	// zero when none waits.
	NextAttempt time.Time
	// PausedSince is when the subscription's delivery was paused, zero
	// while it is not.
	PausedSince time.Time
	// Oldest is when the broker accepted the oldest event the queue holds,
	// zero when it holds none. Only QueueStats fills it in: it looks at
	// every event.
	Oldest time.Time
}

// Stats is a snapshot of the engine's queues. QueuedEvents and QueuedBytes
// are the broker's budget in use, push and queue subscriptions together
// (the dispatcher's Holdings says the same, subscription by subscription).
type Stats struct {
	QueuedEvents int64
	QueuedBytes  int64
	InFlight     int
	Queues       []QueueStats
}

// Stats returns a snapshot of every queue. It is safe for concurrent use.
func (e *Engine) Stats() Stats {
	e.mu.RLock()
	defer e.mu.RUnlock()
	st := Stats{InFlight: int(e.inFlight.Load()), Queues: make([]QueueStats, 0, len(e.queues))}
	st.QueuedEvents, st.QueuedBytes = e.budget.Used()
	for _, q := range e.queues {
		st.Queues = append(st.Queues, q.stats())
	}
	return st
}

// QueueStats returns the snapshot of one subscription's queue; ok is false
// if the engine has no queue for it.
func (e *Engine) QueueStats(sub *eventgrid.EventSubscription) (QueueStats, bool) {
	e.mu.RLock()
	q, ok := e.queues[sub.UID]
	e.mu.RUnlock()
	if !ok {
		return QueueStats{}, false
	}
	st := q.stats()
	q.mu.Lock()
	st.Oldest = q.oldestLocked()
	q.mu.Unlock()
	return st, true
}

// HeldEvents implements eventgrid.EventHolder: the events of sub the engine
// holds, queued, waiting to be retried or in flight.
func (e *Engine) HeldEvents(sub *eventgrid.EventSubscription) int {
	e.mu.RLock()
	q, ok := e.queues[sub.UID]
	e.mu.RUnlock()
	if !ok {
		return 0
	}
	n, _ := q.share.Used()
	return int(n)
}
