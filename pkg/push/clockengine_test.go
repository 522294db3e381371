package push_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// clockedSender is the shared sender fake stamping its calls with the
// engine's clock, and answering the nth attempt with answer(n) (errFail
// when answer is nil).
type clockedSender struct{ *sender }

func newClockedSender(now func() time.Time, answer func(n int) error) *clockedSender {
	var n atomic.Int64
	return &clockedSender{&sender{Now: now, SendFn: func(context.Context, *push.Batch) error {
		k := int(n.Add(1))
		if answer == nil {
			return errFail
		}
		return answer(k)
	}}}
}

// attempts returns the clock times of the attempts made.
func (s *clockedSender) attempts() []time.Time {
	var times []time.Time
	for _, c := range s.Calls() {
		times = append(times, c.At)
	}
	return times
}

// deadLetters records what the engine dead-letters and releases it.
type deadLetters struct {
	mu      sync.Mutex
	letters []eventgrid.DeadLetter
}

func (d *deadLetters) DeadLetter(l eventgrid.DeadLetter) {
	d.mu.Lock()
	d.letters = append(d.letters, l)
	d.mu.Unlock()
	l.Done()
}

func (d *deadLetters) all() []eventgrid.DeadLetter {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]eventgrid.DeadLetter(nil), d.letters...)
}

// clockedEngine is an engine on a fake clock with the production defaults.
func clockedEngine(t *testing.T, mod func(*push.Options), answer func(n int) error) (*push.Engine, *fakeclock.Clock, *clockedSender, *metrics) {
	t.Helper()
	clock := fakeclock.New()
	o := push.DefaultOptions()
	o.Clock = clock
	o.LogDeliveryFailure, o.LogEventExpiry = false, false
	o.Jitter = func() float64 { return 0 }
	if mod != nil {
		mod(&o)
	}
	s := newClockedSender(clock.Now, answer)
	m := newMetrics()
	return mustEngine(t, o, s, m), clock, s, m
}

// runSchedule publishes one event, then, after each attempt, moves the clock
// to the next wake-up, until the event is delivered or dropped. It returns
// the attempts' offsets from acceptance.
func runSchedule(t *testing.T, e *push.Engine, clock *fakeclock.Clock, s *clockedSender, m *metrics, sub *eventgrid.EventSubscription) []time.Duration {
	t.Helper()
	ev := newEvent("e1", 100)
	ev.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, ev)
	for i := 1; ; i++ {
		brokertest.Eventually(t, 5*time.Second, func() error {
			st, _ := e.QueueStats(sub)
			switch {
			case len(s.attempts()) < i:
				return fmt.Errorf("%d attempts, waiting for attempt %d", len(s.attempts()), i)
			case st.Backoff[0]+st.Backoff[1]+st.Scheduled == 1 && st.InFlight == 0, e.Stats().QueuedEvents == 0:
				return nil
			}
			return fmt.Errorf("attempt %d not settled: %+v", i, st)
		})
		if e.Stats().QueuedEvents == 0 {
			break
		}
		if !clock.AdvanceToNext() {
			t.Fatal("an event waits but no timer is armed")
		}
	}
	var out []time.Duration
	for _, at := range s.attempts() {
		out = append(out, at.Sub(ev.Accepted))
	}
	return out
}

func TestEngine_ProductionScheduleOnClock(t *testing.T) {
	t.Run("EdgeQueuesDefaults", func(t *testing.T) {
		e, clock, s, m := clockedEngine(t, nil, nil)
		got := runSchedule(t, e, clock, s, m, newSub(e, "s"))
		want := minutes(0, 1, 11, 21, 31, 41, 51, 61, 71, 81, 91, 101, 111)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("attempts at %v, want %v", got, want)
		}
		m.waitDropped(t, "s", outcome.TimeToLiveExceeded, 1)
	})
	t.Run("TTL1440Minutes", func(t *testing.T) {
		e, clock, s, m := clockedEngine(t, nil, nil)
		sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
			s.RetryPolicy = &eventgrid.RetryPolicy{EventExpiryInMinutes: 1440}
		})
		got := runSchedule(t, e, clock, s, m, sub)
		if len(got) != 30 || got[29] != 281*time.Minute {
			t.Errorf("attempts at %v (%d); want 30 up to 281m", got, len(got))
		}
		m.waitDropped(t, "s", outcome.MaxDeliveryAttemptsExceeded, 1)
	})
	t.Run("SixtyDaysOfUptime", func(t *testing.T) {
		e, clock, s, m := clockedEngine(t, nil, func(n int) error {
			if n < 3 {
				return errFail
			}
			return nil
		})
		sub := newSub(e, "s")
		clock.Advance(60 * 24 * time.Hour)
		got := runSchedule(t, e, clock, s, m, sub)
		if fmt.Sprint(got) != fmt.Sprint(minutes(0, 1, 11)) {
			t.Errorf("after 60 days, attempts at %v, want [0 1m 11m]", got)
		}
	})
	t.Run("CloudExponential", func(t *testing.T) {
		e, clock, s, m := clockedEngine(t, nil, nil)
		sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
			s.RetryPolicy = &eventgrid.RetryPolicy{Schedule: eventgrid.CloudExponential, EventExpiryInMinutes: 60, MaxDeliveryAttempts: 30}
		})
		got := runSchedule(t, e, clock, s, m, sub)
		sec := time.Second
		want := []time.Duration{0, 10 * sec, 40 * sec, 100 * sec, 400 * sec, 1000 * sec, 2800 * sec}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("attempts at %v; want %v", got, want)
		}
		m.waitDropped(t, "s", outcome.TimeToLiveExceeded, 1)
	})
}

func TestEngine_StatusClasses(t *testing.T) {
	cloud := func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{Schedule: eventgrid.CloudExponential}
		s.DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob}
	}
	t.Run("NeverRetriedIsDeadLettered", func(t *testing.T) {
		dl := &deadLetters{}
		e, clock, s, m := clockedEngine(t, func(o *push.Options) { o.DeadLetterer = dl }, func(int) error { return statusErr{code: 400} })
		got := runSchedule(t, e, clock, s, m, newSub(e, "s", cloud))
		if len(got) != 1 {
			t.Errorf("attempts at %v, want one", got)
		}
		l := dl.all()
		if len(l) != 1 || l[0].Reason != "UndeliverableDueToHttpBadRequest" || l[0].Attempts != 1 || l[0].LastStatus != 400 ||
			l[0].LastOutcome != "BadRequest" || l[0].LastAttempt.IsZero() || idOf(l[0].Body) != "e1" {
			t.Errorf("dead letters %+v", l)
		}
		if e.Stats().QueuedEvents != 0 {
			t.Errorf("budget not returned after the dead letter was done")
		}
	})
	t.Run("RetryAfterHonoured", func(t *testing.T) {
		e, clock, s, m := clockedEngine(t, nil, func(n int) error {
			if n == 1 {
				return statusErr{code: 503, retryAfter: 7 * time.Minute}
			}
			return nil
		})
		got := runSchedule(t, e, clock, s, m, newSub(e, "s", cloud))
		if fmt.Sprint(got) != fmt.Sprint(minutes(0, 7)) {
			t.Errorf("attempts at %v, want [0 7m]", got)
		}
	})
	t.Run("MaxAttemptsDeadLettered", func(t *testing.T) {
		dl := &deadLetters{}
		e, clock, s, m := clockedEngine(t, func(o *push.Options) { o.DeadLetterer = dl }, nil)
		sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
			s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 2}
			s.DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob}
		})
		runSchedule(t, e, clock, s, m, sub)
		if l := dl.all(); len(l) != 1 || l[0].Reason != string(outcome.MaxDeliveryAttemptsExceeded) || l[0].Attempts != 2 {
			t.Errorf("dead letters %+v", l)
		}
		if m.dead["s/"+string(outcome.MaxDeliveryAttemptsExceeded)] != 1 {
			t.Errorf("dead-letter metric %v", m.dead)
		}
	})
}

func TestEngine_Probation(t *testing.T) {
	var healthy bool
	var mu sync.Mutex
	e, clock, s, _ := clockedEngine(t, func(o *push.Options) { o.ProbationAfterFailures = 3 }, func(int) error {
		mu.Lock()
		defer mu.Unlock()
		if healthy {
			return nil
		}
		return errFail
	})
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{Schedule: eventgrid.CloudExponential}
	})
	ev := newEvent("e1", 100)
	ev.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, ev)
	for i := 1; i <= 3; i++ {
		brokertest.Eventually(t, 5*time.Second, func() error {
			if st, _ := e.QueueStats(sub); len(s.attempts()) < i || st.Scheduled != 1 {
				return fmt.Errorf("attempt %d: %+v", i, st)
			}
			return nil
		})
		if i < 3 {
			clock.AdvanceToNext()
		}
	}
	st, _ := e.QueueStats(sub)
	if st.ProbationUntil.IsZero() || st.ProbationUntil.Sub(clock.Now()) != 10*time.Second {
		t.Fatalf("after 3 failures: probation until %v (now %v), want 10 s from now", st.ProbationUntil, clock.Now())
	}
	// New events skip the immediate attempt.
	ev2 := newEvent("e2", 100)
	ev2.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, ev2)
	if st, _ := e.QueueStats(sub); st.Scheduled != 2 || st.Ready != 0 || len(s.attempts()) != 3 {
		t.Fatalf("a new event on probation: %+v after %d attempts; want it scheduled, not sent", st, len(s.attempts()))
	}
	mu.Lock()
	healthy = true
	mu.Unlock()
	// When probation ends, the event that waited for it probes the
	// endpoint; its success ends probation. e1 keeps its retry schedule.
	clock.AdvanceTo(st.ProbationUntil)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(sub); len(s.attempts()) != 4 || st.InFlight != 0 || !st.ProbationUntil.IsZero() {
			return fmt.Errorf("after probation: %d attempts, %+v", len(s.attempts()), st)
		}
		return nil
	})
	if probe := s.Calls()[3].IDs(); fmt.Sprint(probe) != "[e2]" {
		t.Errorf("probe carried %v, want [e2]", probe)
	}
	clock.AdvanceToNext()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if e.Stats().QueuedEvents != 0 {
			return fmt.Errorf("%d still queued", e.Stats().QueuedEvents)
		}
		return nil
	})
}

func TestEngine_Isolation_HungSubscribers(t *testing.T) {
	// 30 subscriptions whose endpoints never answer, next to a healthy one:
	// the healthy one gets everything at once, whatever the hung ones hold.
	o := fastOptions()
	o.DeliverTimeout = time.Minute
	release := make(chan struct{})
	var hung, delivered sync.Map
	s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
		if b.Subscription.Name != "healthy" {
			hung.Store(b.Subscription.Name, true)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-release:
				return errFail
			}
		}
		for _, body := range b.Bodies {
			delivered.Store(idOf(body), true)
		}
		return nil
	}}
	e := mustEngine(t, o, s, nil)
	defer close(release)
	var bad []*eventgrid.EventSubscription
	for i := range 30 {
		bad = append(bad, newSub(e, fmt.Sprintf("hung%d", i)))
	}
	for i := range 20 {
		mustPublish(t, e, bad, newEvent(fmt.Sprintf("h%d", i), 100))
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		n := 0
		hung.Range(func(any, any) bool { n++; return true })
		if n != 30 {
			return fmt.Errorf("%d of 30 hung subscriptions tried", n)
		}
		return nil
	})
	good := newSub(e, "healthy")
	for i := range 500 {
		mustPublish(t, e, []*eventgrid.EventSubscription{good}, newEvent(fmt.Sprint(i), 100))
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		n := 0
		delivered.Range(func(any, any) bool { n++; return true })
		if n != 500 {
			return fmt.Errorf("healthy subscription got %d of 500", n)
		}
		return nil
	})
	// The healthy subscription's last request may still be returning. Each
	// hung subscription holds two: its first, and the one it sent once the
	// first had stalled, to learn whether the endpoint hangs.
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st := e.Stats(); st.InFlight != 60 {
			return fmt.Errorf("%d requests in flight, want two per hung subscription (60)", st.InFlight)
		}
		return nil
	})
}

func TestEngine_Admission(t *testing.T) {
	o := fastOptions()
	o.Backoff = [2]time.Duration{time.Hour, time.Hour}
	limits(&o, budget.Limits{EventsPerSubscription: 10})
	s := &sender{SendFn: func(_ context.Context, b *push.Batch) error {
		if b.Subscription.Name == "dead" {
			return errFail
		}
		return nil
	}}
	e := mustEngine(t, o, s, nil)
	dead, live := newSub(e, "dead"), newSub(e, "live")
	for i := range 10 {
		mustPublish(t, e, []*eventgrid.EventSubscription{dead}, newEvent(fmt.Sprint(i), 50))
	}
	err := publish(e, []*eventgrid.EventSubscription{dead}, newEvent("x", 50))
	if eventgrid.ErrorCode(err) != eventgrid.EQueueFull || !contains(eventgrid.ErrorMessage(err), "dead") {
		t.Errorf("publish to the full subscription: %v; want QueueFull naming it", err)
	}
	if err := publish(e, []*eventgrid.EventSubscription{live}, newEvent("y", 50)); err != nil {
		t.Errorf("publish to another subscription refused: %v", err)
	}
	err = publish(e, []*eventgrid.EventSubscription{live, dead}, newEvent("z", 50))
	if eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		t.Errorf("publish that would queue for the full one: %v, want QueueFull", err)
	}
	var many []*eventgrid.Event
	for i := range 11 {
		many = append(many, newEvent(fmt.Sprint("m", i), 50))
	}
	err = publish(e, []*eventgrid.EventSubscription{live}, many...)
	if eventgrid.ErrorCode(err) != eventgrid.EPayloadTooLarge || !contains(eventgrid.ErrorMessage(err), "broker__maxQueuedEventsPerSubscription") {
		t.Errorf("a request that can never fit: %v; want PayloadTooLarge naming the limit", err)
	}
	if err := publish(e, nil, newEvent("nobody", 50)); err != nil {
		t.Errorf("an event matching no subscription: %v", err)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s == sub || indexOf(s, sub) >= 0))
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestEngine_DeleteWhileInFlight(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	var calls int
	var mu sync.Mutex
	s := &sender{SendFn: func(context.Context, *push.Batch) error {
		mu.Lock()
		calls++
		mu.Unlock()
		close(started)
		<-release
		return errFail
	}}
	m := newMetrics()
	e := mustEngine(t, fastOptions(), s, m)
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 10 })
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("a", 50), newEvent("b", 50))
	<-started
	e.SubscriptionDeleted(sub)
	close(release)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st := e.Stats(); st.QueuedEvents != 0 || st.QueuedBytes != 0 || st.InFlight != 0 {
			return fmt.Errorf("budget %+v", st)
		}
		if n := m.droppedN("s", outcome.SubscriptionDeleted); n != 2 {
			return fmt.Errorf("%d counted as deleted, want 2", n)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("%d attempts; the deleted subscription's events were re-queued", calls)
	}
}

var errStopped = errors.New("stopped")

// TestEngine_ProbationEndsWithCloudExponential: a subscription switched
// from CloudExponential to EdgeQueues leaves its probation: new events are
// tried at once, and those that waited for the probation's end are too.
func TestEngine_ProbationEndsWithCloudExponential(t *testing.T) {
	e, clock, s, _ := clockedEngine(t, func(o *push.Options) { o.ProbationAfterFailures = 1 }, nil)
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{Schedule: eventgrid.CloudExponential}
	})
	ev := newEvent("e1", 100)
	ev.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, ev)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(sub); st.ProbationUntil.IsZero() || st.InFlight != 0 {
			return fmt.Errorf("not on probation yet: %+v", st)
		}
		return nil
	})
	ev2 := newEvent("e2", 100)
	ev2.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, ev2) // waits for the probation's end
	edge := *sub
	edge.RetryPolicy = &eventgrid.RetryPolicy{Schedule: eventgrid.EdgeQueues}
	e.SubscriptionPut(&edge)
	ev3 := newEvent("e3", 100)
	ev3.Accepted = clock.Now()
	mustPublish(t, e, []*eventgrid.EventSubscription{&edge}, ev3)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := len(s.attempts()); n != 3 {
			return fmt.Errorf("%d attempts without the clock moving, want 3: e2 and e3 tried at once", n)
		}
		return nil
	})
	if st, _ := e.QueueStats(&edge); !st.ProbationUntil.IsZero() {
		t.Errorf("still on probation until %v after the switch to EdgeQueues", st.ProbationUntil)
	}
}

// TestEngine_LastAttemptAfter50Days: the time of an event's last attempt
// is kept exactly however long the event lives (a millisecond count in 32
// bits would wrap after 49.7 days).
func TestEngine_LastAttemptAfter50Days(t *testing.T) {
	dl := &deadLetters{}
	e, clock, s, m := clockedEngine(t, func(o *push.Options) {
		o.DeadLetterer = dl
		o.Backoff = [2]time.Duration{50 * 24 * time.Hour, 50 * 24 * time.Hour}
	}, nil)
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 2, EventExpiryInMinutes: 200 * 24 * 60}
		s.DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob}
	})
	start := clock.Now()
	runSchedule(t, e, clock, s, m, sub)
	l := dl.all()
	if len(l) != 1 {
		t.Fatalf("%d dead letters, want 1", len(l))
	}
	if want := start.Add(50 * 24 * time.Hour); !l[0].LastAttempt.Equal(want) {
		t.Errorf("LastAttempt %v, want %v", l[0].LastAttempt, want)
	}
}
