package push_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// TestEngine_PauseHoldsResumeDelivers: a paused subscription sends
// nothing, its events wait as ready and its status says since when; once
// resumed, it delivers them.
func TestEngine_PauseHoldsResumeDelivers(t *testing.T) {
	e, clock, s, _ := clockedEngine(t, nil, func(int) error { return nil })
	sub := newSub(e, "s")
	since, ok := e.Pause(sub, true)
	if !ok || !since.Equal(clock.Now()) {
		t.Fatalf("Pause = %v, %v; want paused now", since, ok)
	}
	clock.Advance(time.Second)
	if again, _ := e.Pause(sub, true); !again.Equal(since) {
		t.Errorf("pausing again moved the time to %v", again)
	}
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e1", 100), newEvent("e2", 100))
	st, _ := e.Status(sub)
	if st.Ready != 2 || st.InFlight != 0 || len(s.attempts()) != 0 || !st.PausedSince.Equal(since) {
		t.Fatalf("paused: status %+v, %d attempts; want 2 ready, none sent", st, len(s.attempts()))
	}
	if since, _ := e.Pause(sub, false); !since.IsZero() {
		t.Errorf("resumed, still paused since %v", since)
	}
	waitStats(t, e, sub, func(push.QueueStats) bool { return e.HeldEvents(sub) == 0 })
	if n := len(s.attempts()); n != 2 {
		t.Errorf("%d attempts after resuming, want 2", n)
	}
	if _, ok := e.Pause(&eventgrid.EventSubscription{UID: 1 << 60}, true); ok {
		t.Error("paused a subscription the engine does not have")
	}
}

// TestEngine_PausedEventsExpire: while paused, events still outlive their
// time to live and are given up on then, not when the subscription is
// resumed.
func TestEngine_PausedEventsExpire(t *testing.T) {
	e, clock, s, m := clockedEngine(t, func(o *push.Options) { o.DefaultTTL = time.Minute }, func(int) error { return nil })
	sub := newSub(e, "s")
	e.Pause(sub, true)
	old := newEvent("old", 100)
	old.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, old)
	clock.Advance(30 * time.Second)
	young := newEvent("young", 100)
	young.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, young)
	clock.Advance(31 * time.Second) // old is 61 s old, young 31 s
	m.waitDropped(t, "s", outcome.TimeToLiveExceeded, 1)
	if p := mustPeek(t, e, sub, 1); idOf(p[0].Body) != "young" {
		t.Errorf("left %s, want young", idOf(p[0].Body))
	}
	clock.Advance(30 * time.Second)
	m.waitDropped(t, "s", outcome.TimeToLiveExceeded, 2)
	if n := len(s.attempts()); n != 0 || e.HeldEvents(sub) != 0 {
		t.Errorf("%d attempts, %d held; want none", n, e.HeldEvents(sub))
	}
}

// TestEngine_Purge: purge drops what waits (ready or in back-off),
// counted as dropped with the reason Purged, and not what is in flight.
func TestEngine_Purge(t *testing.T) {
	release := make(chan struct{})
	e, _, _, m := clockedEngine(t, nil, func(n int) error {
		switch n {
		case 1:
			return statusErr{code: 503} // e0 waits in back-off
		case 2:
			<-release // e1 stays in flight
		}
		return nil
	})
	sub := newSub(e, "s")
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e0", 100), newEvent("e1", 100), newEvent("e2", 100))
	waitStats(t, e, sub, func(st push.QueueStats) bool { return st.Backoff[0] == 1 && st.InFlight == 1 })
	if n, ok := e.Purge(sub); n != 2 || !ok {
		t.Fatalf("Purge = %d, %v; want the 2 not in flight", n, ok)
	}
	m.waitDropped(t, "s", outcome.Purged, 2)
	close(release)
	waitStats(t, e, sub, func(push.QueueStats) bool { return e.HeldEvents(sub) == 0 })
	if n, _ := e.Purge(sub); n != 0 {
		t.Errorf("a second purge took %d", n)
	}
}

// TestEngine_RetryNowNeverGivesUp: with three attempts allowed, retry now
// called again and again against an endpoint that still fails gives up
// nothing: the forced attempts do not count, and the events keep their
// attempts and their schedule.
func TestEngine_RetryNowNeverGivesUp(t *testing.T) {
	e, clock, s, m := clockedEngine(t, nil, func(int) error { return statusErr{code: 503} })
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 3}
	})
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e1", 100), newEvent("e2", 100))
	settled := func(attempts int) {
		t.Helper()
		brokertest.Eventually(t, 5*time.Second, func() error {
			st, _ := e.QueueStats(sub)
			if n := len(s.attempts()); n != attempts || st.InFlight != 0 || st.Backoff[0]+st.Backoff[1]+st.Scheduled != 2 {
				return fmt.Errorf("%d attempts, stats %+v", n, st)
			}
			return nil
		})
	}
	settled(2)
	due := mustPeek(t, e, sub, 2)[0].Next
	for i := range 10 {
		moved, atLast, _ := e.RetryNow(sub)
		if moved != 2 || atLast != 0 {
			t.Fatalf("RetryNow %d = %d moved, %d at their last attempt", i, moved, atLast)
		}
		settled(4 + 2*i)
	}
	for _, w := range mustPeek(t, e, sub, 2) {
		if w.Attempts != 1 || w.MaxAttempts != 3 || !w.Next.Equal(due) {
			t.Errorf("after 10 retries: %+v; want attempt 1 of 3, due at %v", w, due)
		}
	}
	if n := m.droppedN("s", outcome.MaxDeliveryAttemptsExceeded); n != 0 {
		t.Fatalf("%d events given up on", n)
	}
	clock.AdvanceToNext() // the second attempt, counted
	settled(24)
	if _, atLast, _ := e.RetryNow(sub); atLast != 2 {
		t.Errorf("%d at their last attempt, want 2", atLast)
	}
	settled(26)
	clock.AdvanceToNext() // the third, the last
	m.waitDropped(t, "s", outcome.MaxDeliveryAttemptsExceeded, 2)
}

// TestEngine_PeekKeepsARequestInOrder: the events of one request show in
// the order they were published, wherever each waits: here the first in
// back-off, the second in flight, the third ready.
func TestEngine_PeekKeepsARequestInOrder(t *testing.T) {
	release := make(chan struct{})
	e, _, _, _ := clockedEngine(t, nil, func(n int) error {
		if n == 1 {
			return statusErr{code: 503}
		}
		<-release
		return nil
	})
	defer close(release)
	sub := newSub(e, "s")
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e1", 100), newEvent("e2", 100), newEvent("e3", 100))
	waitStats(t, e, sub, func(st push.QueueStats) bool { return st.Backoff[0] == 1 && st.InFlight == 1 })
	var ids []string
	for _, w := range mustPeek(t, e, sub, 3) {
		ids = append(ids, idOf(w.Body)+":"+w.Queue)
	}
	if got := strings.Join(ids, " "); got != "e1:backoff1 e2:inFlight e3:ready" {
		t.Errorf("peek = %s", got)
	}
}

// TestEngine_DeclaredPause: a declared subscription is paused as its
// declaration says each time it is put; one the REST API manages keeps
// what Pause did across puts.
func TestEngine_DeclaredPause(t *testing.T) {
	e, _, _, _ := clockedEngine(t, nil, func(int) error { return nil })
	declared := func(paused bool) func(*eventgrid.EventSubscription) {
		return func(s *eventgrid.EventSubscription) {
			s.Owner, s.Paused = eventgrid.Owner{Source: eventgrid.SourceDesiredConfig}, paused
		}
	}
	sub := newSub(e, "d", declared(true))
	if st, _ := e.Status(sub); st.PausedSince.IsZero() {
		t.Fatal("a subscription declared paused is not paused")
	}
	again := *sub
	again.Paused = false
	e.SubscriptionPut(&again)
	if st, _ := e.Status(sub); !st.PausedSince.IsZero() {
		t.Error("the declaration no longer says paused, and it stays paused")
	}

	api := newSub(e, "a")
	e.Pause(api, true)
	update := *api
	update.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 5}
	e.SubscriptionPut(&update)
	if st, _ := e.Status(api); st.PausedSince.IsZero() {
		t.Error("an update resumed a subscription paused over the API")
	}
}

// TestEngine_PausedRetriedEventsExpire: an event that falls due for its
// retry while the subscription is paused, older than the events already
// waiting, is given up on when it outlives its time to live, not when the
// younger ones do.
func TestEngine_PausedRetriedEventsExpire(t *testing.T) {
	e, clock, _, m := clockedEngine(t, func(o *push.Options) { o.DefaultTTL = 5 * time.Minute }, func(n int) error {
		if n == 1 {
			return statusErr{code: 503} // old waits a minute in back-off
		}
		return nil
	})
	sub := newSub(e, "s")
	old := newEvent("old", 100)
	old.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, old)
	waitStats(t, e, sub, func(st push.QueueStats) bool { return st.Backoff[0] == 1 })
	e.Pause(sub, true)
	clock.Advance(30 * time.Second)
	young := newEvent("young", 100)
	young.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, young)
	clock.Advance(31 * time.Second) // old's retry falls due: ready behind young
	waitStats(t, e, sub, func(st push.QueueStats) bool { return st.Ready == 2 })
	clock.Advance(4*time.Minute + time.Second) // old is 5 min 2 s old, young 4 min 32 s
	m.waitDropped(t, "s", outcome.TimeToLiveExceeded, 1)
	if p := mustPeek(t, e, sub, 1); idOf(p[0].Body) != "young" {
		t.Errorf("left %s, want young", idOf(p[0].Body))
	}
}
