package delivery

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// DropReason says why events left a queue without being delivered.
type DropReason string

// The reasons events are dropped.
const (
	// DropExpired: the event's time to live passed.
	DropExpired DropReason = "expired"
	// DropMaxAttempts: the subscription's maxDeliveryAttempts was reached.
	DropMaxAttempts DropReason = "max_attempts"
	// DropDeleted: the subscription or its topic was deleted.
	DropDeleted DropReason = "subscription_deleted"
	// DropShutdown: the broker stopped with the event still queued.
	DropShutdown DropReason = "shutdown"
	// DropUndeliverable: the destination's answer is never retried
	// (CloudExponential status classes).
	DropUndeliverable DropReason = "undeliverable"
)

// Metrics receives what the engine measures. Implementations must be safe
// for concurrent use and must not block.
type Metrics interface {
	// Attempt reports one delivery request of n events, its latency and
	// whether it failed.
	Attempt(sub *eventgrid.EventSubscription, n int, latency time.Duration, err error)
	// FirstAttempt reports, once per event and subscription, the time from
	// acceptance to the start of its first delivery attempt.
	FirstAttempt(sub *eventgrid.EventSubscription, delay time.Duration)
	// Dropped reports n events that left sub's queue undelivered.
	Dropped(sub *eventgrid.EventSubscription, reason DropReason, n int)
	// DeadLettered reports n events of sub handed to the dead-letter
	// destination, by deadLetterReason.
	DeadLettered(sub *eventgrid.EventSubscription, reason string, n int)
}

// NopMetrics discards every measurement.
type NopMetrics struct{}

// Attempt implements Metrics.
func (NopMetrics) Attempt(*eventgrid.EventSubscription, int, time.Duration, error) {}

// FirstAttempt implements Metrics.
func (NopMetrics) FirstAttempt(*eventgrid.EventSubscription, time.Duration) {}

// Dropped implements Metrics.
func (NopMetrics) Dropped(*eventgrid.EventSubscription, DropReason, int) {}

// DeadLettered implements Metrics.
func (NopMetrics) DeadLettered(*eventgrid.EventSubscription, string, int) {}

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
	// LastFailure and LastError describe the most recent failed attempt.
	LastFailure time.Time
	LastError   string
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
	return q.stats(), true
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
