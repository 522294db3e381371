package push

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// Policy is a subscription's effective retry policy: its retryPolicy over
// the module defaults.
type Policy struct {
	Schedule    eventgrid.RetrySchedule
	MaxAttempts int
	TTL         time.Duration
	// Backoff are the EdgeQueues delays: after the first failed attempt,
	// and after every later one.
	Backoff [2]time.Duration
	// Scale multiplies the CloudExponential delays (tests shorten them).
	Scale float64
}

// CloudDelays is the CloudExponential schedule, cloud Event Grid's: the
// delay after the first, second, … failed attempt; the last one repeats.
var CloudDelays = []time.Duration{
	10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
}

// The CloudExponential bounds: jitter, Retry-After and the least delays.
const (
	cloudJitter       = 0.2 // each delay randomised by up to ±20 %
	maxRetryAfter     = time.Hour
	minDelayDefault   = 10 * time.Second
	minDelayTimeout   = 2 * time.Minute // 408
	minDelayAvailable = 30 * time.Second
)

// The lists a retried event waits in.
const (
	listBackoff1 = 0 // EdgeQueues: the first back-off list
	listBackoff2 = 1 // EdgeQueues: the second
	listTimed    = 2 // CloudExponential: ordered by due time
)

// Decision is what happens to an event after a failed attempt: it waits in
// List until Due, or, when Drop is set, is given up on for that reason.
type Decision struct {
	List int
	Due  time.Time
	Drop outcome.Reason
}

// NextAttempt decides, after attempts failed attempts of an event accepted
// at accepted, the last of which ended with last at now, when it is tried
// again or why it is not. jitter, in [-1, 1], randomises CloudExponential
// delays; it is a parameter so that the function stays pure.
func NextAttempt(p Policy, attempts int, accepted, now time.Time, last Result, jitter float64) Decision {
	if p.Schedule == eventgrid.CloudExponential && neverRetried(last.Outcome) {
		return Decision{Drop: outcome.Undeliverable(last.Outcome.String())}
	}
	if attempts >= p.MaxAttempts {
		return Decision{Drop: outcome.MaxDeliveryAttemptsExceeded}
	}
	var d Decision
	if p.Schedule == eventgrid.CloudExponential {
		d.List = listTimed
		d.Due = now.Add(cloudDelay(p.Scale, attempts, last, jitter))
	} else {
		d.List = listBackoff2
		if attempts <= 1 {
			d.List = listBackoff1
		}
		d.Due = now.Add(p.Backoff[d.List])
	}
	if d.Due.Sub(accepted) > p.TTL {
		// The next attempt would come after the event's time to live.
		return Decision{Drop: outcome.TimeToLiveExceeded}
	}
	return d
}

// cloudDelay is the CloudExponential wait after attempts failed attempts.
func cloudDelay(scale float64, attempts int, last Result, jitter float64) time.Duration {
	if scale <= 0 {
		scale = 1
	}
	base := CloudDelays[min(max(attempts, 1), len(CloudDelays))-1]
	d := scaled(base, scale*(1+cloudJitter*max(-1, min(jitter, 1))))
	floor := minDelayDefault
	switch {
	case last.StatusCode == 408:
		floor = minDelayTimeout
	case last.StatusCode == 503:
		floor = minDelayAvailable
	}
	d = max(d, scaled(floor, scale))
	if last.RetryAfter > 0 && (last.StatusCode == 429 || last.StatusCode == 503) {
		d = max(d, min(last.RetryAfter, maxRetryAfter))
	}
	return d
}

// maxDelay bounds every computed delay: a hundred years, far beyond any
// time to live, and far from the overflow of time.Duration.
const maxDelay = 100 * 365 * 24 * time.Hour

// scaled returns d multiplied by f, saturated at maxDelay: a large
// exponentialScale must not overflow into a negative delay.
func scaled(d time.Duration, f float64) time.Duration {
	if x := float64(d) * f; x < float64(maxDelay) {
		return time.Duration(max(x, 0))
	}
	return maxDelay
}

// neverRetried reports whether CloudExponential gives up on an event at
// once after this outcome.
func neverRetried(o Outcome) bool {
	switch o {
	case OutcomeBadRequest, OutcomeUnauthorized, OutcomeForbidden, OutcomeNotFound, OutcomePayloadTooLarge:
		return true
	}
	return false
}

// probationLength is how long an endpoint stays on probation after its
// last outcome.
func probationLength(o Outcome) time.Duration {
	switch o {
	case OutcomeSocketError:
		return 30 * time.Second
	case OutcomeNotFound, OutcomeResolutionError, OutcomeUnauthorized, OutcomeForbidden:
		return 5 * time.Minute
	}
	return 10 * time.Second
}
