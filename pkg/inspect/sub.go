package inspect

import (
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Sub is one subscription's record. Its methods are safe for concurrent use
// and do nothing on a nil *Sub, the record of a broker without a Board.
type Sub struct {
	b           *Board
	topic, name string
	cur         atomic.Pointer[eventgrid.EventSubscription] // as last put

	delivered, failed, deadLettered, dropped atomic.Int64
	lastSuccess                              atomic.Int64 // Unix ns, 0 before the first
	lastStatus                               atomic.Int32 // of the last failed attempt, 0 for none

	hist  subHistory
	fails failures
	out   hub
}

// Totals are a subscription's counts since it was created.
type Totals struct {
	// Delivered counts the events delivered (queue subscriptions:
	// acknowledged); FailedAttempts the event attempts that failed (queue:
	// released or whose lock expired); DeadLettered and Dropped the events
	// given up on with and without a dead-letter destination.
	Delivered, FailedAttempts, DeadLettered, Dropped int64
	// LastSuccess is the end of the last attempt that succeeded, zero
	// before the first.
	LastSuccess time.Time
	// LastFailureStatus is the HTTP status of the last failed attempt, 0
	// when it had none.
	LastFailureStatus int
}

// Attempted records the end of one attempt: delivered and failed events,
// the duration of its request (negative when none was made, as for a queue
// subscription's settlements) and, for failed events, the HTTP status the
// destination answered (0 for none).
func (s *Sub) Attempted(delivered, failed int, took time.Duration, status int, at time.Time) {
	if s == nil {
		return
	}
	if delivered > 0 {
		s.delivered.Add(int64(delivered))
		s.lastSuccess.Store(at.UnixNano())
	}
	if failed > 0 {
		s.failed.Add(int64(failed))
		s.lastStatus.Store(int32(status))
	}
	s.hist.attempted(at, delivered, failed, took)
}

// GaveUp records an event the subscription gave up on: in the totals, the
// history and the given-up list, and as an outcome for those watching. It
// returns how many older entries of the given-up list its bounds pushed
// out for it.
func (s *Sub) GaveUp(g GivenUp) (evicted int) {
	if s == nil {
		return 0
	}
	if g.DeadLettered {
		s.deadLettered.Add(1)
	} else {
		s.dropped.Add(1)
	}
	s.hist.gaveUp(g.Time)
	evicted = s.fails.add(g)
	if s.Watching() {
		o := Outcome{Outcome: OutcomeDropped, Body: g.Body, Time: g.Time, Attempt: g.Attempts,
			StatusCode: g.LastStatus, Latency: -1, Error: g.LastError, Reason: g.Reason}
		if g.DeadLettered {
			o.Outcome = OutcomeDeadLettered
		}
		s.Report(o)
	}
	return evicted
}

// Purged records n events an operator purged from the subscription
// (docs/console.md#purge): they count as dropped.
func (s *Sub) Purged(n int) {
	if s != nil && n > 0 {
		s.dropped.Add(int64(n))
	}
}

// Watching reports whether anyone reads the subscription's outcomes: one
// atomic load, to ask before making an Outcome.
func (s *Sub) Watching() bool { return s != nil && s.out.watching() }

// The outcomes of the deliveries stream.
const (
	OutcomeDelivered    = "delivered"
	OutcomeFailed       = "failed"
	OutcomeDeadLettered = "deadLettered"
	OutcomeDropped      = "dropped"
)

// Outcome is how one attempt for one event ended, or that the broker gave
// up on the event.
type Outcome struct {
	Outcome string
	// EventID is the event's id; when it is empty, Report reads it from
	// Body, the event, once it knows the outcome is sent.
	EventID string
	Body    []byte
	Time    time.Time
	// Attempt is which attempt this was for the event, from 1.
	Attempt    int
	StatusCode int
	// Latency is the request's duration; negative when none was made.
	Latency time.Duration
	Error   string
	Reason  string
	// Next is when a failed event is tried again; zero when it is not.
	Next time.Time
}

type outcomeJSON struct {
	Outcome         string   `json:"outcome"`
	EventID         string   `json:"eventId,omitempty"`
	Time            string   `json:"time"`
	Attempt         int      `json:"attempt"`
	StatusCode      int      `json:"statusCode,omitempty"`
	LatencyMs       *float64 `json:"latencyMs,omitempty"`
	Error           string   `json:"error,omitempty"`
	Reason          string   `json:"reason,omitempty"`
	NextAttemptTime string   `json:"nextAttemptTime,omitempty"`
}

// Report gives o to the subscription's outcome streams, within
// MaxStreamRate.
func (s *Sub) Report(o Outcome) {
	if !s.Watching() || !s.out.admit(o.Time) {
		return
	}
	if o.EventID == "" {
		o.EventID = EventID(o.Body)
	}
	j := outcomeJSON{Outcome: o.Outcome, EventID: o.EventID, Time: FormatTime(o.Time), Attempt: o.Attempt,
		StatusCode: o.StatusCode, Error: o.Error, Reason: o.Reason, NextAttemptTime: FormatTime(o.Next)}
	if o.Latency >= 0 {
		ms := float64(o.Latency.Microseconds()) / 1000
		j.LatencyMs = &ms
	}
	data, err := json.Marshal(j)
	if err != nil {
		return // strings and numbers only: it cannot fail
	}
	s.out.publish(Item{Event: "delivery", Data: data})
}

// Watch opens a stream of the subscription's outcomes, or returns nil once
// the subscription is deleted (and for a nil *Sub).
func (s *Sub) Watch() *Stream {
	if s == nil {
		return nil
	}
	return s.out.watch()
}

// Totals returns the subscription's totals; none for a nil *Sub.
func (s *Sub) Totals() Totals {
	if s == nil {
		return Totals{}
	}
	t := Totals{
		Delivered: s.delivered.Load(), FailedAttempts: s.failed.Load(),
		DeadLettered: s.deadLettered.Load(), Dropped: s.dropped.Load(),
		LastFailureStatus: int(s.lastStatus.Load()),
	}
	if ns := s.lastSuccess.Load(); ns != 0 {
		t.LastSuccess = time.Unix(0, ns).UTC()
	}
	return t
}

// Failures returns the latest events given up on, newest first, at most top
// of them, and how many the subscription gave up on in all.
func (s *Sub) Failures(top int) ([]Failure, int64) { return s.fails.newest(top) }

// ClaimRedrive marks the entries of the given-up list that f chooses, and
// that were not redriven yet, as redriven at now, and returns their events,
// oldest first (shared with the list: they must not be modified), and the
// events it leaves, with why (see NotMoved). A redrive that cannot queue
// them gives them back with UnclaimRedrive. A nil *Sub has none.
func (s *Sub) ClaimRedrive(f RedriveFilter, now time.Time) ([]Redrivable, []NotMoved) {
	if s == nil {
		return nil, nil
	}
	return s.fails.claim(f, now)
}

// UnclaimRedrive makes the entries of rs, which ClaimRedrive returned and
// which could not be queued, redrivable again.
func (s *Sub) UnclaimRedrive(rs []Redrivable) {
	if s != nil {
		s.fails.unclaim(rs)
	}
}

// History returns the subscription's history up to now.
func (s *Sub) History() SubHistory {
	return s.hist.snapshot(s.b.now(), s.b.held(s.cur.Load()))
}

// sample records the events the subscription holds now, for the history.
func (s *Sub) sample(now time.Time) { s.hist.sample(now, s.b.held(s.cur.Load())) }

// deleted ends the subscription's streams.
func (s *Sub) deleted() {
	data, _ := json.Marshal(map[string]string{"topic": s.topic, "subscription": s.name})
	s.out.end(Item{Event: "deleted", Data: data})
}

// FormatTime writes t as the inspection API writes times: RFC 3339 in UTC
// with fractional seconds; "" for the zero time, which is left out.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
