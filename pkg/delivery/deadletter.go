package delivery

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// The deadLetterReason values of cloud Event Grid. A never-retried status
// gives "UndeliverableDueToHttp" + the outcome's name.
const (
	ReasonMaxDeliveryAttempts = "MaxDeliveryAttemptsExceeded"
	ReasonTimeToLive          = "TimeToLiveExceeded"
	reasonHTTPPrefix          = "UndeliverableDueToHttp"
)

// DeadLetter is one event the retry policy gave up on, for a subscription
// that has a dead-letter destination.
type DeadLetter struct {
	Subscription *eventgrid.EventSubscription
	// Body is the event as the subscription receives it.
	Body []byte
	// Reason is one of the Reason* constants or UndeliverableDueToHttp….
	Reason string
	// Attempts is the number of delivery attempts made.
	Attempts int
	// Last is the outcome of the last attempt; LastAttempt when it was
	// made (zero if none was).
	Last        Result
	LastAttempt time.Time
	// Published is when the broker accepted the event.
	Published time.Time
	// Done must be called exactly once, when the letter has been written or
	// given up on: until then the event counts against the queue budget.
	Done func()
}

// DeadLetterer takes dead letters. The engine calls it with its locks
// released; it must not block for long (it queues the letter and writes it
// later) and must be safe for concurrent use.
type DeadLetterer interface {
	DeadLetter(l DeadLetter)
}
