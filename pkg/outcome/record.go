package outcome

import (
	"strings"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Kind is what a Record tells.
type Kind uint8

// The kinds of records.
const (
	// Started is an attempt begun: Events handed to the destination in one
	// request (push) or to a receiver (queue). FirstDelays are, for the
	// events on their first attempt, the time since they were accepted
	// (push only: a queue's first receive waits on its receivers, not on
	// the broker).
	Started Kind = iota + 1
	// Attempted is an attempt ended: of its Events, Failed failed and the
	// rest were delivered (push: the destination's answer; queue:
	// acknowledged, or released, or their locks expired). Attempt, Status,
	// Err and Latency describe it; Outcomes, each event's outcome, for
	// those watching the subscription.
	Attempted
	// Settled is Events lock tokens of a queue subscription settled by
	// their receiver, by Settlement: acknowledge, release, reject or
	// renewLock.
	Settled
	// GaveUp is one event given up on for Reason: by its retry policy
	// (time to live, attempts, a never-retried answer) or its receiver
	// (rejected); dead-lettered when DeadLettered, dropped otherwise.
	GaveUp
	// Discarded is Events events that left a subscription undelivered
	// with the subscription or the broker (Reason SubscriptionDeleted or
	// Shutdown), or that an operator purged (Reason Purged): counted, not
	// one by one.
	Discarded
	// Evicted is Events entries of the subscription's given-up list
	// (package inspect) that its bounds pushed out for newer ones. The
	// reporter makes it, when it tells the board an event given up on.
	Evicted
)

// Record is one fact about a subscription's deliveries. A delivery mode
// fills in the fields of its Kind and hands it to a Reporter; the reporter
// does not keep it.
type Record struct {
	Kind Kind
	Sub  *eventgrid.EventSubscription
	// Time is when it happened.
	Time time.Time
	// Events is how many events the record is about; Failed how many of an
	// attempt's failed.
	Events, Failed int
	// Attempt is, for an attempt that ended, its number for its events
	// (the largest when they differ), from 1; for an event given up on, the
	// attempts made.
	Attempt int
	// Status is the HTTP status the destination answered (an event given
	// up on: its last attempt's), 0 for none; Err why an attempt failed.
	Status int
	Err    error
	// Latency is an attempt's request duration, negative when no request
	// was made (a queue's settlement).
	Latency time.Duration
	// Expired counts the failed events of a queue attempt whose locks
	// expired unsettled, and Requeued those of them available again (the
	// others were given up on).
	Expired, Requeued int
	// Settlement is the kind of a Settled record: acknowledge, release,
	// reject or renewLock.
	Settlement string
	// Reason is why events were given up on or discarded.
	Reason Reason
	// Body is the event given up on, as its subscription receives it.
	// LastOutcome, LastError and LastAttempt describe its last attempt
	// (LastOutcome in the dead letter's lastDeliveryOutcome names),
	// Published when the broker accepted it. DeadLettered says it goes to
	// the subscription's dead-letter destination, which calls Done once
	// done with it.
	Body         []byte
	LastOutcome  string
	LastError    string
	LastAttempt  time.Time
	Published    time.Time
	DeadLettered bool
	Done         func()
	// FirstDelays are a Started record's first-attempt delays.
	FirstDelays []time.Duration
	// Outcomes are an Attempted record's events, one by one, collected
	// only while someone watches the subscription (Sub.Watching).
	Outcomes []Event
}

// Event is how one event's attempt ended, for those watching.
type Event struct {
	Body    []byte
	Attempt int32
	Failed  bool
	// Error says why a failed attempt failed; Next is when the event is
	// tried again (zero: at once, or never).
	Error string
	Next  time.Time
}

// Reason says why events left a subscription undelivered. Its values are
// Event Grid's deadLetterReason names, and the same everywhere: the reason
// label of eventgrid_events_dropped_total and
// eventgrid_subscription_dead_lettered_total, the reason field of log
// lines, a dead letter's deadLetterReason and the inspection API's given-up
// list (docs/metrics.md#reasons).
type Reason string

// The reasons.
const (
	// TimeToLiveExceeded: the event's time to live passed (push and queue).
	TimeToLiveExceeded Reason = "TimeToLiveExceeded"
	// MaxDeliveryAttemptsExceeded: a push subscription's
	// retryPolicy.maxDeliveryAttempts was reached.
	MaxDeliveryAttemptsExceeded Reason = "MaxDeliveryAttemptsExceeded"
	// MaxDeliveryCountExceeded: a queue subscription's maxDeliveryCount
	// was reached.
	MaxDeliveryCountExceeded Reason = "MaxDeliveryCountExceeded"
	// Rejected: a queue subscription's receiver rejected the event.
	Rejected Reason = "Rejected"
	// SubscriptionDeleted: the subscription or its topic was deleted, or it
	// changed its delivery mode, with the event still held.
	SubscriptionDeleted Reason = "SubscriptionDeleted"
	// Shutdown: the broker stopped with the event still held.
	Shutdown Reason = "Shutdown"
	// Purged: an operator purged the subscription's waiting events
	// (docs/delivery.md#purge).
	Purged Reason = "Purged"
)

// undeliverable prefixes the reason of an event whose destination answered
// with a status the CloudExponential schedule never retries.
const undeliverable = "UndeliverableDueToHttp"

// Undeliverable is the reason of an event given up on at once because its
// destination's answer is never retried, by the name of that answer's
// outcome: UndeliverableDueToHttpBadRequest, …NotFound and so on.
func Undeliverable(outcome string) Reason { return Reason(undeliverable + outcome) }

// ByRetryPolicy reports whether r is a retry policy's: time to live,
// attempts or an answer never retried. Such drops also count as
// ExpiredCounts.
func (r Reason) ByRetryPolicy() bool {
	switch r {
	case TimeToLiveExceeded, MaxDeliveryAttemptsExceeded, MaxDeliveryCountExceeded:
		return true
	}
	return strings.HasPrefix(string(r), undeliverable)
}

// PushReasons and QueueReasons are the reasons whose series a push and a
// queue subscription start with; an Undeliverable reason's starts on first
// use.
var (
	PushReasons  = []Reason{TimeToLiveExceeded, MaxDeliveryAttemptsExceeded, SubscriptionDeleted, Shutdown, Purged}
	QueueReasons = []Reason{TimeToLiveExceeded, MaxDeliveryCountExceeded, Rejected, SubscriptionDeleted, Shutdown, Purged}
)
