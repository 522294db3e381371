package outcome

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// Metrics measures records (package metrics). Implementations must be safe
// for concurrent use and must not block. The record is passed by value, so
// that a mode's records stay on its stack; its slices must not be kept.
type Metrics interface {
	Record(r Record)
}

type nopMetrics struct{}

func (nopMetrics) Record(Record) {}

// Options configure a Reporter. Zero values take the defaults.
type Options struct {
	// DeliveryLogs are the log switches: LogDeliverySuccess logs every
	// attempt that delivered events (push batches, queue
	// acknowledgements); LogDeliveryFailure every attempt that failed
	// (push failures, queue releases and expired locks); LogEventExpiry
	// every event given up on, dead-lettered or dropped.
	eventgrid.DeliveryLogs
	// LogRateWindow and LogRateBurst rate-limit each subscription's lines
	// of failed attempts and of events given up on: at most LogRateBurst
	// lines of each kind per window of LogRateWindow (by default 10 a
	// minute); a negative LogRateBurst turns the limit off.
	LogRateWindow time.Duration
	LogRateBurst  int
	// Metrics, Board and DeadLetterer, if not nil, are told the records:
	// the metrics all of them, the board (each subscription's record on
	// it) attempts and events given up on, the dead-letter writer the
	// events given up on for a subscription that has a dead-letter
	// destination.
	Metrics      Metrics
	Board        *inspect.Board
	DeadLetterer eventgrid.DeadLetterer
	// Clock times the rate limit's windows; nil means the system clock.
	Clock clock.Clock
}

// Reporter tells records to the logs, the metrics, the board and the
// dead-letter writer (see the package documentation). Create it with New;
// it is safe for concurrent use.
type Reporter struct {
	opts Options
	log  zerolog.Logger
}

// New returns a reporter logging to log.
func New(o Options, log zerolog.Logger) *Reporter {
	if o.LogRateWindow <= 0 {
		o.LogRateWindow = time.Minute
	}
	if o.LogRateBurst == 0 {
		o.LogRateBurst = 10
	}
	if o.Metrics == nil {
		o.Metrics = nopMetrics{}
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	return &Reporter{opts: o, log: log.With().Str("component", "delivery").Logger()}
}

// DeadLetters reports whether events given up on for a subscription that
// has a dead-letter destination are dead-lettered: whether the reporter has
// a dead-letter writer. Without one they are dropped.
func (r *Reporter) DeadLetters() bool { return r.opts.DeadLetterer != nil }

// For returns the reporter of sub's records, which a delivery mode keeps
// with sub's queue and closes when the queue goes.
func (r *Reporter) For(sub *eventgrid.EventSubscription) *Sub {
	return &Sub{r: r, rec: r.opts.Board.Sub(sub), topic: sub.Topic, name: sub.Name}
}

// Report tells rec, about a subscription whose queue is gone or was never
// there (events discarded as they were enqueued): to the metrics and the
// logs, with no rate limit.
func (r *Reporter) Report(rec *Record) { r.report(nil, rec) }

// report tells rec once to every sink; s is its subscription's reporter,
// nil for none.
func (r *Reporter) report(s *Sub, rec *Record) {
	r.opts.Metrics.Record(*rec)
	switch rec.Kind {
	case Attempted:
		r.attempted(s, rec)
	case GaveUp:
		r.gaveUp(s, rec)
	case Discarded:
		if rec.Reason == Purged && s != nil {
			s.rec.Purged(rec.Events)
		}
		if rec.Reason == SubscriptionDeleted && rec.Events > 0 {
			r.log.Warn().Str("topic", rec.Sub.Topic).Str("subscription", rec.Sub.Name).Int("events", rec.Events).
				Msg("event subscription deleted; its queued events were discarded")
		}
	}
}

// attempted tells the end of an attempt to the board and the logs.
func (r *Reporter) attempted(s *Sub, rec *Record) {
	delivered := rec.Events - rec.Failed
	if s != nil {
		s.rec.Attempted(delivered, rec.Failed, rec.Latency, rec.Status, rec.Time)
		for i := range rec.Outcomes {
			s.rec.Report(outcomeOf(rec, &rec.Outcomes[i]))
		}
	}
	if delivered > 0 && r.opts.LogDeliverySuccess {
		r.log.Info().Str("topic", rec.Sub.Topic).Str("subscription", rec.Sub.Name).Int("events", delivered).
			Int("deliveryCount", rec.Attempt-1).Msg("delivered")
	}
	if rec.Failed == 0 || !r.opts.LogDeliveryFailure {
		return
	}
	ok, suppressed := s.allow(logFailure, rec.Time)
	if !ok {
		return
	}
	l := r.log.Warn().Str("topic", rec.Sub.Topic).Str("subscription", rec.Sub.Name).Int("events", rec.Failed).
		Int("attempt", rec.Attempt).Err(rec.Err)
	if rec.Expired > 0 {
		l = l.Int("availableAgain", rec.Requeued)
	}
	if suppressed > 0 {
		l = l.Int("suppressed", suppressed)
	}
	l.Msg(logMessages[logFailure])
}

// outcomeOf is the board's outcome of the event e of rec.
func outcomeOf(rec *Record, e *Event) inspect.Outcome {
	o := inspect.Outcome{Outcome: inspect.OutcomeDelivered, Body: e.Body, Time: rec.Time, Attempt: int(e.Attempt),
		Latency: rec.Latency, Next: e.Next}
	if e.Failed {
		o.Outcome, o.StatusCode, o.Error = inspect.OutcomeFailed, rec.Status, e.Error
	}
	return o
}

// gaveUp tells an event given up on to the board, the logs and the
// dead-letter writer.
func (r *Reporter) gaveUp(s *Sub, rec *Record) {
	if s != nil {
		evicted := s.rec.GaveUp(inspect.GivenUp{
			Time: rec.Time, DeadLettered: rec.DeadLettered, Reason: string(rec.Reason), Attempts: rec.Attempt,
			LastError: rec.LastError, LastStatus: rec.Status, Body: rec.Body,
		})
		if evicted > 0 {
			r.opts.Metrics.Record(Record{Kind: Evicted, Sub: rec.Sub, Time: rec.Time, Events: evicted})
		}
	}
	if r.opts.LogEventExpiry {
		r.logGivenUp(s, rec)
	}
	if rec.DeadLettered {
		r.opts.DeadLetterer.DeadLetter(eventgrid.DeadLetter{
			Subscription: rec.Sub, Body: rec.Body, Reason: string(rec.Reason), Attempts: rec.Attempt,
			LastOutcome: rec.LastOutcome, LastStatus: rec.Status, LastAttempt: rec.LastAttempt,
			Published: rec.Published, Done: rec.Done,
		})
	}
}

// logGivenUp writes the line of an event given up on, within the rate
// limit.
func (r *Reporter) logGivenUp(s *Sub, rec *Record) {
	kind := logDropped
	switch {
	case rec.DeadLettered:
		kind = logDeadLettered
	case !rec.Reason.ByRetryPolicy():
		kind = logRejected
	}
	ok, suppressed := s.allow(kind, rec.Time)
	if !ok {
		return
	}
	l := r.log.Warn().Str("topic", rec.Sub.Topic).Str("subscription", rec.Sub.Name).Str("eventId", inspect.EventID(rec.Body)).
		Str("reason", string(rec.Reason)).Int("attempts", rec.Attempt).Float64("ageSeconds", rec.Time.Sub(rec.Published).Seconds())
	if suppressed > 0 {
		l = l.Int("suppressed", suppressed)
	}
	l.Msg(logMessages[kind])
}
