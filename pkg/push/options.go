package push

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// Options configure the Engine. Zero values are replaced by the defaults of
// DefaultOptions.
type Options struct {
	// DefaultMaxDeliveryAttempts and DefaultTTL apply unless a
	// subscription's retryPolicy sets its own.
	DefaultMaxDeliveryAttempts int
	DefaultTTL                 time.Duration
	// DefaultSchedule is the delivery profile of subscriptions whose
	// retryPolicy names none.
	DefaultSchedule eventgrid.RetrySchedule
	// ExponentialScale multiplies the CloudExponential delays and
	// probation lengths; tests shorten them with it.
	ExponentialScale float64
	// ProbationAfterFailures is the number of consecutive failed attempts
	// that put a CloudExponential subscription on probation.
	ProbationAfterFailures int
	// DefaultMaxEventsPerBatch and DefaultMaxBatchBytes fill in the cap a
	// batching subscription leaves unset.
	DefaultMaxEventsPerBatch int
	DefaultMaxBatchBytes     int
	// Backoff holds the delays of the two back-off lists: after the first
	// failed attempt, and after every later one.
	Backoff [2]time.Duration
	// DeliverTimeout bounds one delivery request.
	DeliverTimeout time.Duration
	// MaxConcurrent is the number of delivery workers. MaxPerSubscription
	// bounds one subscription's concurrency: its requests in flight, not
	// counting up to as many stalled ones. A subscription starts at one;
	// each success adds one, 429 and 503 lower it at most once per round
	// trip, and other failures change nothing (control.go).
	// Unproven subscriptions (no success yet), failing ones and hung ones
	// share at most half of the workers.
	MaxConcurrent      int
	MaxPerSubscription int
	// SuspectAfter is the longest a request may be in flight before it is
	// suspect; a subscription's request is suspect sooner, after four times
	// its usual answer time, but not before SuspectAfter/5 (nor, while the
	// subscription has no usual answer time, later). A suspect request's
	// worker leaves the pool to wait for the answer, and a new worker takes
	// its place; MaxParked bounds the requests waiting so, and so the
	// goroutines beyond the pool. Zero means the defaults: 1 s and twice
	// MaxConcurrent. SuspectAfter also scales the watchdog, which looks
	// every SuspectAfter/200, and the least time before a request is
	// stalled, SuspectAfter/100 (stall.go).
	SuspectAfter time.Duration
	MaxParked    int
	// Budget is the broker's budget, which every queued event counts in
	// (see package budget); nil means a budget of its own with the default
	// limits.
	Budget *budget.Budget
	// Reporter tells what happens to deliveries (package outcome): to the
	// logs, the metrics, the inspection board and the dead-letter writer.
	// The broker gives both delivery modes one. When it is nil, the engine
	// makes its own from DeliveryLogs, LogRateWindow, LogRateBurst,
	// DeadLetterer and Board (see outcome.Options), which are otherwise
	// ignored.
	Reporter *outcome.Reporter
	eventgrid.DeliveryLogs
	LogRateWindow time.Duration
	LogRateBurst  int

	// Clock is the source of time; nil means the system clock.
	Clock clock.Clock
	// DeadLetterer takes the events that subscriptions with a dead-letter
	// destination give up on; nil drops them as subscriptions without one.
	DeadLetterer eventgrid.DeadLetterer
	// Jitter returns a number in [-1, 1] that randomises CloudExponential
	// delays; nil means uniformly random.
	Jitter func() float64
	// Board, if not nil, gets each subscription's attempts, outcomes and
	// events given up on, for the inspection API (docs/console.md).
	Board *inspect.Board
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		DefaultMaxDeliveryAttempts: 30,
		DefaultTTL:                 7200 * time.Second,
		DefaultSchedule:            eventgrid.EdgeQueues,
		ExponentialScale:           1,
		ProbationAfterFailures:     10,
		DefaultMaxEventsPerBatch:   10,
		DefaultMaxBatchBytes:       1058576,
		Backoff:                    [2]time.Duration{time.Minute, 10 * time.Minute},
		DeliverTimeout:             60 * time.Second,
		MaxConcurrent:              100,
		MaxPerSubscription:         16,
		SuspectAfter:               time.Second,
		DeliveryLogs:               eventgrid.DeliveryLogs{LogDeliveryFailure: true, LogEventExpiry: true},
		LogRateWindow:              time.Minute,
		LogRateBurst:               10,
	}
}

// MaxRequests returns the most requests the engine has in flight at once:
// the pool's and the parked ones, defaults applied. An HTTP client's bound
// on connections per host should be no lower, or requests to a host whose
// requests hang would wait for a connection behind them.
func (o Options) MaxRequests() int {
	o.setDefaults()
	return o.MaxConcurrent + o.MaxParked
}

func (o *Options) setDefaults() {
	d := DefaultOptions()
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&o.DefaultMaxDeliveryAttempts, d.DefaultMaxDeliveryAttempts)
	set(&o.DefaultMaxEventsPerBatch, d.DefaultMaxEventsPerBatch)
	set(&o.DefaultMaxBatchBytes, d.DefaultMaxBatchBytes)
	set(&o.MaxConcurrent, d.MaxConcurrent)
	set(&o.MaxPerSubscription, d.MaxPerSubscription)
	set(&o.ProbationAfterFailures, d.ProbationAfterFailures)
	set(&o.MaxParked, 2*o.MaxConcurrent)
	if o.SuspectAfter <= 0 {
		o.SuspectAfter = d.SuspectAfter
	}
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = d.DefaultTTL
	}
	if o.DefaultSchedule == "" {
		o.DefaultSchedule = d.DefaultSchedule
	}
	if o.ExponentialScale <= 0 {
		o.ExponentialScale = d.ExponentialScale
	}
	for i := range o.Backoff {
		if o.Backoff[i] <= 0 {
			o.Backoff[i] = d.Backoff[i]
		}
	}
	if o.DeliverTimeout <= 0 {
		o.DeliverTimeout = d.DeliverTimeout
	}
	if o.Budget == nil {
		o.Budget = budget.New(budget.Limits{})
	}
	if o.LogRateWindow <= 0 {
		o.LogRateWindow = d.LogRateWindow
	}
	if o.LogRateBurst == 0 {
		o.LogRateBurst = d.LogRateBurst
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	if o.Jitter == nil {
		o.Jitter = func() float64 { return 2*rand.Float64() - 1 }
	}
}

// Batch is one delivery request.
type Batch struct {
	Subscription *eventgrid.EventSubscription
	// Bodies are the events' JSON objects (eventgrid.Event.Body), in order.
	Bodies [][]byte
	// DeliveryCount is the number of attempts already made for the events
	// of the batch (the largest, when they differ): aeg-delivery-count.
	DeliveryCount int
}

// Sender delivers batches to destinations. It must be safe for concurrent
// use and must return once ctx is done.
type Sender interface {
	// Send makes one delivery attempt and returns nil if the destination
	// accepted the batch (HTTP 200-204). The engine reuses b afterwards:
	// Send must not keep it, or its Bodies slice, once it returns.
	Send(ctx context.Context, b *Batch) error
}
