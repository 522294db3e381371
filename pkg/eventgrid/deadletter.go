package eventgrid

import "time"

// DeadLetter is one event a subscription gave up on, push or queue, for a
// subscription that has a dead-letter destination. Both delivery modes
// fill in the same fields, and one writer keeps them
// (docs/delivery.md#dead-lettering).
type DeadLetter struct {
	Subscription *EventSubscription
	// Body is the event as the subscription hands it out.
	Body []byte
	// Reason is why the event was given up on: MaxDeliveryAttemptsExceeded,
	// TimeToLiveExceeded or UndeliverableDueToHttp… for push delivery;
	// MaxDeliveryCountExceeded, TimeToLiveExceeded or Rejected for a queue.
	Reason string
	// Attempts is the number of delivery attempts made (push), or the
	// number of times the event was received (queue).
	Attempts int
	// LastOutcome is how the last delivery ended: for push delivery the
	// outcome of the last attempt (Busy, NotFound, TimedOut, …); for a
	// queue how its last receive ended (Rejected, Released, LockExpired),
	// or NeverReceived. LastStatus is the HTTP status of the last
	// attempt's answer, 0 when there was none.
	LastOutcome string
	LastStatus  int
	// LastAttempt is when the last delivery was made (zero if none was);
	// Published when the broker accepted the event.
	LastAttempt time.Time
	Published   time.Time
	// Done must be called exactly once, when the letter has been written or
	// given up on: until then the event counts against the broker's
	// budget.
	Done func()
}

// DeadLetterer takes dead letters. Both delivery modes call it with their
// locks released; it must not block for long (it queues the letter and
// writes it later) and must be safe for concurrent use.
type DeadLetterer interface {
	DeadLetter(l DeadLetter)
}
