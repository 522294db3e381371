package push_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// outcomes reads the outcomes waiting in st, as "outcome id attempt".
func outcomes(t *testing.T, st *inspect.Stream) []string {
	t.Helper()
	items, _, _ := st.Take(nil)
	var out []string
	for _, it := range items {
		var o struct {
			Outcome, EventID, NextAttemptTime, Error, Reason string
			Attempt, StatusCode                              int
			LatencyMs                                        *float64
		}
		if err := json.Unmarshal(it.Data, &o); err != nil {
			t.Fatalf("%s: %v", it.Data, err)
		}
		s := fmt.Sprintf("%s %s %d", o.Outcome, o.EventID, o.Attempt)
		if o.StatusCode != 0 {
			s += fmt.Sprintf(" %d", o.StatusCode)
		}
		if o.NextAttemptTime != "" {
			s += " next"
		}
		if o.Reason != "" {
			s += " " + o.Reason
		}
		if o.LatencyMs != nil {
			s += " timed"
		}
		out = append(out, s)
	}
	return out
}

// waitOutcomes reads the outcomes waiting in st until at least n have
// come, and returns them sorted. A request's outcomes are reported once its
// worker has let go of the queue, after the queue shows the request ended,
// and the workers of two requests may report in either order.
func waitOutcomes(t *testing.T, st *inspect.Stream, n int) []string {
	t.Helper()
	var got []string
	brokertest.Eventually(t, 5*time.Second, func() error {
		got = append(got, outcomes(t, st)...)
		if len(got) < n {
			return fmt.Errorf("%d outcomes %q, want %d", len(got), got, n)
		}
		return nil
	})
	slices.Sort(got)
	return got
}

// TestEngine_Inspection follows two events of a failing subscription
// through what the inspection API shows: a peek that changes nothing, the
// outcome of every attempt, retry now, the events given up on and the
// totals.
func TestEngine_Inspection(t *testing.T) {
	var fail bool
	board := inspect.New(inspect.Options{MaxFailures: 10, MaxFailureBytes: 1 << 20})
	e, clock, s, _ := clockedEngine(t, func(o *push.Options) { o.Board = board }, func(int) error {
		if fail {
			return statusErr{code: 503}
		}
		return nil
	})
	fail = true
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 2}
	})
	rec := board.Subscription(sub.UID)
	watch := rec.Watch()
	defer watch.Close()

	start := clock.Now()
	e1, e2 := newEvent("e1", 100), newEvent("e2", 100)
	e1.Accepted, e2.Accepted = start, start.Add(time.Millisecond)
	// Two requests, the later-accepted one first: a peek orders by
	// acceptance, not by place in the queue.
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, e2)
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, e1)
	waitStats(t, e, sub, func(st push.QueueStats) bool { return st.Backoff[0] == 2 && st.InFlight == 0 })

	for range 2 { // a peek takes nothing
		p, ok := e.Peek(sub, 10)
		if !ok || p.Total != 2 || len(p.Events) != 2 {
			t.Fatalf("peek = %+v, %v; want the 2 events", p, ok)
		}
		for i, w := range p.Events {
			if id := idOf(w.Body); id != fmt.Sprint("e", i+1) || w.Queue != inspect.QueueBackoff1 || w.Attempts != 1 ||
				w.LastError != "status" || !w.Next.Equal(start.Add(time.Minute)) || !w.Enqueued.Equal(start.Add(time.Duration(i)*time.Millisecond)) {
				t.Errorf("peeked %d: %s %+v", i, id, w)
			}
		}
	}
	if p, _ := e.Peek(sub, 1); p.Total != 2 || len(p.Events) != 1 || idOf(p.Events[0].Body) != "e1" {
		t.Errorf("peek of the top 1 = %+v; want the oldest, e1", p)
	}
	st, _ := e.QueueStats(sub)
	if st.Failures != 2 || !st.NextAttempt.Equal(start.Add(time.Minute)) || !st.Oldest.Equal(start) {
		t.Errorf("stats %+v; want 2 failures, next attempt in a minute, oldest at the start", st)
	}
	if got := strings.Join(waitOutcomes(t, watch, 2), ","); got != "failed e1 1 503 next timed,failed e2 1 503 next timed" {
		t.Errorf("outcomes after the first attempts: %s", got)
	}

	// Retry now: both are tried again at once, and fail. A forced attempt
	// costs nothing (it used to spend each event's last attempt and give
	// them up): both wait again as they did, at their first attempt, due
	// when they were. Their next attempt, the last, gives them up.
	if n, atLast, ok := e.RetryNow(sub); n != 2 || atLast != 2 || !ok {
		t.Fatalf("RetryNow = %d moved, %d at their last attempt, %v; want 2 and 2", n, atLast, ok)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		st, _ := e.QueueStats(sub)
		if n := len(s.attempts()); n != 4 || st.InFlight != 0 || st.Backoff[0]+st.Scheduled != 2 {
			return fmt.Errorf("%d attempts, stats %+v", n, st)
		}
		return nil
	})
	if got := s.attempts(); !got[3].Equal(start) {
		t.Errorf("the retried attempts were at %v, not at once", got)
	}
	if got := strings.Join(waitOutcomes(t, watch, 2), ","); got != "failed e1 1 503 next timed,failed e2 1 503 next timed" {
		t.Errorf("outcomes of the forced attempts: %s", got)
	}
	for i, w := range mustPeek(t, e, sub, 2) {
		if id := idOf(w.Body); id != fmt.Sprint("e", i+1) || w.Queue != inspect.QueueBackoff1 || w.Attempts != 1 || w.MaxAttempts != 2 ||
			!w.Next.Equal(start.Add(time.Minute)) {
			t.Errorf("after retry now, peeked %d: %s %+v", i, id, w)
		}
	}
	clock.Advance(time.Minute)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := len(s.attempts()); n != 6 || e.HeldEvents(sub) != 0 {
			return fmt.Errorf("%d attempts, %d held", n, e.HeldEvents(sub))
		}
		return nil
	})
	// The events given up on are reported after they left the queue.
	brokertest.Eventually(t, 5*time.Second, func() error {
		if _, total := rec.Failures(10); total != 2 {
			return fmt.Errorf("%d events given up on, want 2", total)
		}
		return nil
	})
	fs, total := rec.Failures(10)
	if total != 2 || len(fs) != 2 {
		t.Fatalf("given up: %+v (total %d)", fs, total)
	}
	for _, f := range fs {
		if f.Reason != string(outcome.MaxDeliveryAttemptsExceeded) || f.DeadLettered || f.Attempts != 2 || f.LastStatus != 503 ||
			f.LastError != "status" || (f.EventID != "e1" && f.EventID != "e2") || f.EventBytes != 100 {
			t.Errorf("given up: %+v", f)
		}
	}
	got := waitOutcomes(t, watch, 2)
	if len(got) != 2 || !strings.HasPrefix(got[0], "dropped ") || !strings.HasSuffix(got[0], " 2 503 MaxDeliveryAttemptsExceeded") {
		t.Errorf("outcomes of the last attempts: %q", got)
	}

	fail = false
	e3 := newEvent("e3", 100)
	e3.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, e3)
	waitStats(t, e, sub, func(push.QueueStats) bool { return e.HeldEvents(sub) == 0 })
	want := inspect.Totals{Delivered: 1, FailedAttempts: 6, Dropped: 2, LastSuccess: clock.Now(), LastFailureStatus: 503}
	if tot := rec.Totals(); tot != want {
		t.Errorf("totals %+v, want %+v", tot, want)
	}
	if got := waitOutcomes(t, watch, 1); len(got) != 1 || got[0] != "delivered e3 1 timed" {
		t.Errorf("outcome of the delivery: %q", got)
	}
	if p, _ := e.Peek(sub, 10); p.Total != 0 || len(p.Events) != 0 {
		t.Errorf("peek of an empty queue: %+v", p)
	}
	if _, ok := e.Peek(&eventgrid.EventSubscription{UID: 1 << 60}, 10); ok {
		t.Error("a peek of a subscription the engine does not have")
	}
}

// TestEngine_RetryNowEndsProbation: a CloudExponential subscription on
// probation, whose new events wait for its end, delivers them at once after
// retry now.
func TestEngine_RetryNowEndsProbation(t *testing.T) {
	var fail = true
	e, _, s, _ := clockedEngine(t, func(o *push.Options) { o.ProbationAfterFailures = 1 }, func(int) error {
		if fail {
			return statusErr{code: 503}
		}
		return nil
	})
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{Schedule: eventgrid.CloudExponential}
	})
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("first", 100))
	waitStats(t, e, sub, func(st push.QueueStats) bool { return !st.ProbationUntil.IsZero() && st.InFlight == 0 })
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("second", 100))
	if p, _ := e.Peek(sub, 10); len(p.Events) != 2 || p.Events[1].Queue != inspect.QueueScheduled || p.Events[1].Attempts != 0 || p.Events[1].LastError != "" {
		t.Fatalf("peek on probation: %+v", p)
	}
	fail = false
	if n, _, _ := e.RetryNow(sub); n != 2 {
		t.Fatalf("RetryNow moved %d, want 2", n)
	}
	waitStats(t, e, sub, func(st push.QueueStats) bool { return e.HeldEvents(sub) == 0 && st.ProbationUntil.IsZero() })
	if n := len(s.attempts()); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}

}

// mustPeek peeks at sub's queue, which must hold n events.
func mustPeek(t *testing.T, e *push.Engine, sub *eventgrid.EventSubscription, n int) []inspect.Waiting {
	t.Helper()
	p, ok := e.Peek(sub, 100)
	if !ok || p.Total != n || len(p.Events) != n {
		t.Fatalf("peek = %+v, %v; want %d events", p, ok, n)
	}
	return p.Events
}

// waitStats waits until sub's queue stats satisfy ok.
func waitStats(t *testing.T, e *push.Engine, sub *eventgrid.EventSubscription, ok func(push.QueueStats) bool) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(sub); !ok(st) {
			return fmt.Errorf("stats %+v", st)
		}
		return nil
	})
}
