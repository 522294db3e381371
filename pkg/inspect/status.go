package inspect

import "time"

// Status is what a delivery mode holds of one subscription now, in the
// terms both modes share, so that the API can show a deliveryStatus
// (docs/console.md#delivery-status) without knowing which mode made it.
type Status struct {
	// Ready counts the events that can be delivered now (push: ready for
	// an attempt; queue: available to receive). Waiting counts those
	// waiting to be tried again later (push: in back-off or on the
	// CloudExponential schedule; queue: delayed by a release). InFlight
	// counts what is being delivered (push: requests in flight, of at most
	// ConcurrencyLimit; queue: events locked by a receiver).
	Ready, Waiting, InFlight int
	ConcurrencyLimit         int
	// Failures counts the failed attempts since the last success; a queue
	// subscription, whose receivers say nothing of its health, has none.
	// LastFailure and LastError describe the most recent failed attempt.
	Failures    int
	LastFailure time.Time
	LastError   string
	// NextAttempt is when the earliest waiting event is due, Oldest when
	// the broker accepted the oldest event held, and ProbationUntil when
	// a probation ends (docs/design.md#probation); each is zero when it
	// does not apply.
	NextAttempt, Oldest, ProbationUntil time.Time
	// PausedSince is when the subscription's delivery was paused
	// (docs/delivery.md#pause-and-resume), zero while it is not.
	PausedSince time.Time
	// ReceiversWaiting counts the receives of a queue subscription
	// waiting for events now, and LastReceive is when its last receive
	// came, zero before the first; push subscriptions have neither.
	ReceiversWaiting int
	LastReceive      time.Time
	// Taken is when the status was read, by the mode's clock.
	Taken time.Time
}
