package push_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// hangingSender is the shared sender fake answering at once for
// subscriptions that are not hanging, and holding the requests of those
// that are until the test ends.
type hangingSender struct {
	*sender
	hanging sync.Map // names of the hanging subscriptions
	tried   sync.Map // names of the hanging subscriptions sent a request
	release chan struct{}
}

func newHangingSender() *hangingSender {
	s := &hangingSender{release: make(chan struct{})}
	s.sender = &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
		if _, hung := s.hanging.Load(b.Subscription.Name); !hung {
			return nil
		}
		s.tried.Store(b.Subscription.Name, true)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.release:
			return errFail
		}
	}}
	return s
}

// hangingEngine returns an engine sending through s; the hung requests are
// released before it is closed.
func hangingEngine(t *testing.T, o push.Options, s *hangingSender) *push.Engine {
	e := mustEngine(t, o, s, nil)
	t.Cleanup(func() { close(s.release) })
	return e
}

func (s *hangingSender) hang(names ...string) {
	for _, n := range names {
		s.hanging.Store(n, true)
	}
}

// deliveredTo returns how many events the subscription named name was
// sent, and accepted.
func (s *hangingSender) deliveredTo(name string) int {
	n := 0
	for _, times := range s.Delivered(name) {
		n += times
	}
	return n
}

// suspectEngine is an engine on a fake clock with a small pool.
func suspectEngine(t *testing.T, workers, parked int) (*push.Engine, *fakeclock.Clock, *hangingSender) {
	t.Helper()
	clock := fakeclock.New()
	o := fastOptions()
	o.Clock = clock
	o.MaxConcurrent, o.MaxParked = workers, parked
	o.DeliverTimeout = time.Hour
	// A request the watchdog cancels stays in back-off while the test
	// moves the clock on, however finely the watchdog looks.
	o.Backoff = [2]time.Duration{time.Hour, time.Hour}
	s := newHangingSender()
	return hangingEngine(t, o, s), clock, s
}

// prove delivers one event to each subscription, so that they are proven.
func prove(t *testing.T, e *push.Engine, s *hangingSender, subs ...*eventgrid.EventSubscription) {
	t.Helper()
	for _, sub := range subs {
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("proof-"+sub.Name, 50))
		brokertest.Eventually(t, 5*time.Second, func() error {
			if st, _ := e.QueueStats(sub); s.deliveredTo(sub.Name) != 1 || st.InFlight != 0 {
				return fmt.Errorf("%s not proven yet", sub.Name)
			}
			return nil
		})
	}
}

func waitInFlight(t *testing.T, e *push.Engine, n int) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if got := e.Stats().InFlight; got != n {
			return fmt.Errorf("%d requests in flight, want %d", got, n)
		}
		return nil
	})
}

// waitWatched waits until n requests are in flight and the watchdog that
// finds the suspect and stalled ones is armed, for a test that moves the
// clock next. A request counts itself in flight before it arms the
// watchdog: a test that moved the clock on the count alone could move it
// before the watchdog was armed, which then counts its rounds from the
// moved clock and misses the request turning suspect or stalled.
func waitWatched(t *testing.T, e *push.Engine, clock *fakeclock.Clock, n int) {
	t.Helper()
	// The watchdog looks every SuspectAfter/200; the tests keep the
	// default SuspectAfter, and their other timers are far later.
	tick := push.DefaultOptions().SuspectAfter / 200
	brokertest.Eventually(t, 5*time.Second, func() error {
		if got := e.Stats().InFlight; got != n {
			return fmt.Errorf("%d requests in flight, want %d", got, n)
		}
		if next, ok := clock.Next(); !ok || next.After(clock.Now().Add(tick)) {
			return fmt.Errorf("%d requests in flight, and the watchdog not armed yet", n)
		}
		return nil
	})
}

// waitServedBesideParked waits until healthy has been sent both its events
// and has none in flight (the sender counts a delivery before its request
// ends), then checks that the parked request is the only one in flight.
func waitServedBesideParked(t *testing.T, e *push.Engine, s *hangingSender, healthy *eventgrid.EventSubscription) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(healthy); s.deliveredTo(healthy.Name) != 2 || st.InFlight != 0 {
			return fmt.Errorf("healthy got %d of 2 events beside a parked request, %d requests in flight", s.deliveredTo(healthy.Name), st.InFlight)
		}
		return nil
	})
	if st := e.Stats(); st.InFlight != 1 {
		t.Errorf("%d requests in flight, want the parked one", st.InFlight)
	}
}

// TestEngine_SuspectRequestIsParked: with a pool of one worker, a request
// that stays in flight past the suspect bound leaves the pool, and the next
// subscription in line is served while it waits.
func TestEngine_SuspectRequestIsParked(t *testing.T) {
	e, clock, s := suspectEngine(t, 1, 1)
	hung, healthy := newSub(e, "hung"), newSub(e, "healthy")
	prove(t, e, s, hung, healthy)
	s.hang("hung")
	mustPublish(t, e, []*eventgrid.EventSubscription{hung}, newEvent("h", 50))
	waitWatched(t, e, clock, 1)
	mustPublish(t, e, []*eventgrid.EventSubscription{healthy}, newEvent("g", 50))
	// Within the suspect bound the request holds the only worker.
	clock.Advance(100 * time.Millisecond)
	if n := s.deliveredTo("healthy"); n != 1 {
		t.Fatalf("healthy was served while the only worker was held, before its request turned suspect")
	}
	// A request of a subscription that answers at once is suspect after a
	// fifth of SuspectAfter (200 ms).
	clock.Advance(200 * time.Millisecond)
	waitServedBesideParked(t, e, s, healthy)
	// Its endpoint has not answered since: the subscription sends one
	// request beside the stalled one, to learn whether the endpoint hangs,
	// and no more.
	mustPublish(t, e, []*eventgrid.EventSubscription{hung}, newEvent("h2", 50), newEvent("h3", 50))
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(hung); st.InFlight != 2 || st.Ready != 1 {
			return fmt.Errorf("suspect subscription: %+v, want two in flight and one waiting", st)
		}
		return nil
	})
	clock.Advance(time.Second)
	if st, _ := e.QueueStats(hung); st.InFlight != 2 || st.Ready != 1 {
		t.Errorf("suspect subscription after its second request stalled: %+v, want two in flight and one waiting", st)
	}
}

// TestEngine_StalledRequestLeavesItsSlot: with a pool of one worker and
// room to park two requests, a request that stalls leaves the pool as soon
// as it has stalled, long before it would turn suspect, and the next
// subscription in line is served while it waits. With one request parked
// of two (half the room), the next one that stalls keeps its worker until
// it is suspect.
func TestEngine_StalledRequestLeavesItsSlot(t *testing.T) {
	e, clock, s := suspectEngine(t, 1, 2)
	hung, other, healthy := newSub(e, "hung"), newSub(e, "other"), newSub(e, "healthy")
	prove(t, e, s, hung, other, healthy)
	s.hang("hung", "other")
	mustPublish(t, e, []*eventgrid.EventSubscription{hung}, newEvent("h", 50))
	waitWatched(t, e, clock, 1)
	mustPublish(t, e, []*eventgrid.EventSubscription{healthy}, newEvent("g", 50))
	// The subscription usually answers at once: its request stalls after
	// the least bound, 10 ms, and would be suspect after 200 ms.
	clock.Advance(15 * time.Millisecond)
	waitServedBesideParked(t, e, s, healthy)
	mustPublish(t, e, []*eventgrid.EventSubscription{other}, newEvent("o", 50))
	waitWatched(t, e, clock, 2)
	mustPublish(t, e, []*eventgrid.EventSubscription{healthy}, newEvent("g2", 50))
	clock.Advance(100 * time.Millisecond)
	if n := s.deliveredTo("healthy"); n != 2 {
		t.Fatalf("healthy was served while the only worker was held by a request stalled beside a parked one, before it turned suspect")
	}
	clock.Advance(200 * time.Millisecond)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := s.deliveredTo("healthy"); n != 3 {
			return fmt.Errorf("healthy got %d of 3 events once the second stalled request turned suspect", n)
		}
		return nil
	})
}

// TestEngine_SuspectShareBounded: unproven subscriptions that hang hold at
// most half the pool plus the parked allowance, taking turns in it; a
// proven subscription keeps the other half.
func TestEngine_SuspectShareBounded(t *testing.T) {
	base := runtime.NumGoroutine()
	e, clock, s := suspectEngine(t, 4, 2)
	healthy := newSub(e, "healthy")
	prove(t, e, s, healthy)
	var hung []*eventgrid.EventSubscription
	for i := range 10 {
		sub := newSub(e, fmt.Sprint("hung", i))
		s.hang(sub.Name)
		hung = append(hung, sub)
	}
	mustPublish(t, e, hung, newEvent("h", 50))
	waitInFlight(t, e, 2) // unproven: half of the four workers
	peak := 0
	brokertest.Eventually(t, 10*time.Second, func() error {
		clock.Advance(100 * time.Millisecond)
		peak = max(peak, e.Stats().InFlight)
		if g := runtime.NumGoroutine(); g > base+4+2+2 {
			t.Fatalf("%d goroutines; the pool is 4 and 2 may be parked (base %d)", g, base)
		}
		tried := 0
		s.tried.Range(func(any, any) bool { tried++; return true })
		if tried != 10 {
			return fmt.Errorf("%d of 10 hung subscriptions tried", tried)
		}
		return nil
	})
	if peak > 4 {
		t.Errorf("%d requests in flight at most; want 4: two parked, two in the slow share", peak)
	}
	for i := range 20 {
		mustPublish(t, e, []*eventgrid.EventSubscription{healthy}, newEvent(fmt.Sprint("g", i), 50))
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := s.deliveredTo("healthy"); n != 21 {
			return fmt.Errorf("healthy got %d of 21 events beside ten hung subscriptions", n)
		}
		return nil
	})
}

// TestEngine_WarmSubscriptionsThatHang: proven subscriptions at full
// concurrency that start hanging hold the whole pool only until their
// requests turn suspect.
func TestEngine_WarmSubscriptionsThatHang(t *testing.T) {
	e, clock, s := suspectEngine(t, 8, 16)
	var warm []*eventgrid.EventSubscription
	for i := range 2 {
		warm = append(warm, newSub(e, fmt.Sprint("warm", i)))
	}
	healthy := newSub(e, "healthy")
	prove(t, e, s, healthy)
	// Three successes each raise their concurrency to 4: together they
	// fill the pool of 8, 4 each, whatever the workers' turns. (With more,
	// one could take the whole pool before the other had a worker, and
	// send up to its limit once the pool had room, while the test counts.)
	for i := range 3 {
		mustPublish(t, e, warm, newEvent(fmt.Sprint("w", i), 50))
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		for _, sub := range warm {
			// Answered, and done with: no answer comes after they hang.
			if st, _ := e.QueueStats(sub); s.deliveredTo(sub.Name) != 3 || st.InFlight != 0 || st.ConcurrencyLimit != 4 {
				return fmt.Errorf("%s warming up: %+v", sub.Name, st)
			}
		}
		return nil
	})
	s.hang("warm0", "warm1")
	var evs []*eventgrid.Event
	for i := range 20 {
		evs = append(evs, newEvent(fmt.Sprint("x", i), 50))
	}
	mustPublish(t, e, warm, evs...)
	waitWatched(t, e, clock, 8) // the whole pool
	mustPublish(t, e, []*eventgrid.EventSubscription{healthy}, newEvent("g", 50))
	for range 3 {
		clock.Advance(100 * time.Millisecond)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := s.deliveredTo("healthy"); n != 2 {
			return fmt.Errorf("healthy got %d of 2 events", n)
		}
		return nil
	})
	// Once their requests have stalled, with no answer since, each hung
	// subscription sends one probe, whose answer would tell whether the
	// endpoint hangs or only those requests did, and then no more: its
	// stalled requests keep counting.
	inFlight := func() error {
		for _, sub := range warm {
			if st, _ := e.QueueStats(sub); st.InFlight != 5 {
				return fmt.Errorf("%s: %d requests in flight, want its 4 stalled ones and a probe", sub.Name, st.InFlight)
			}
		}
		return nil
	}
	brokertest.Eventually(t, 5*time.Second, inFlight)
	for range 10 {
		clock.Advance(100 * time.Millisecond)
	}
	if err := inFlight(); err != nil {
		t.Error(err)
	}
}

// TestEngine_DeleteReleasesInFlightAtOnce: deleting a subscription returns
// its events to the budget at once, those in hung requests included.
func TestEngine_DeleteReleasesInFlightAtOnce(t *testing.T) {
	o := fastOptions()
	limits(&o, budget.Limits{Events: 10})
	o.DeliverTimeout = time.Hour
	// A clock that stands still: on the system clock the hung request
	// would stall after 10 ms, and a second one go to learn whether the
	// endpoint hangs, if the test were that slow to count.
	o.Clock = fakeclock.New()
	s := newHangingSender()
	e := hangingEngine(t, o, s)
	hung, other := newSub(e, "hung", func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 5 }), newSub(e, "other")
	s.hang("hung")
	var evs []*eventgrid.Event
	for i := range 10 {
		evs = append(evs, newEvent(fmt.Sprint(i), 50))
	}
	mustPublish(t, e, []*eventgrid.EventSubscription{hung}, evs...)
	waitInFlight(t, e, 1)
	if err := publish(e, []*eventgrid.EventSubscription{other}, newEvent("o", 50)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		t.Fatalf("publish with the budget full: %v, want QueueFull", err)
	}
	e.SubscriptionDeleted(hung)
	if st := e.Stats(); st.QueuedEvents != 0 || st.QueuedBytes != 0 {
		t.Errorf("right after the delete: %d events, %d bytes still counted", st.QueuedEvents, st.QueuedBytes)
	}
	if err := publish(e, []*eventgrid.EventSubscription{other}, newEvent("o", 50)); err != nil {
		t.Errorf("publish after the delete: %v", err)
	}
}

// TestEngine_DeadLetteredIsNotDropped: an event handed to the dead-letter
// destination is logged and counted as dead-lettered, not as dropped.
func TestEngine_DeadLetteredIsNotDropped(t *testing.T) {
	var buf logbuf.Buffer
	dl := &deadLetters{}
	o := fastOptions()
	o.LogEventExpiry = true
	o.DeadLetterer = dl
	s := &sender{SendFn: func(context.Context, *push.Batch) error { return errFail }}
	m := newMetrics()
	e := push.New(o, s, m, zerolog.New(&buf))
	t.Cleanup(func() { _ = closeWithin(e, 5*time.Second) })
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 1}
		s.DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob}
	})
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e1", 50))
	brokertest.Eventually(t, 5*time.Second, func() error {
		if len(dl.all()) != 1 {
			return fmt.Errorf("%d dead letters", len(dl.all()))
		}
		return nil
	})
	if n := m.droppedN("s", outcome.MaxDeliveryAttemptsExceeded); n != 0 {
		t.Errorf("a dead-lettered event counted as dropped (%d)", n)
	}
	m.mu.Lock()
	dead := m.dead["s/"+string(outcome.MaxDeliveryAttemptsExceeded)]
	m.mu.Unlock()
	if dead != 1 {
		t.Errorf("dead-lettered count %d, want 1", dead)
	}
	if got := tallyOf(logbuf.Decode[logLine](t, &buf), "event dead-lettered"); got.emitted != 1 {
		t.Errorf("%d \"event dead-lettered\" lines, want 1", got.emitted)
	}
	if got := tallyOf(logbuf.Decode[logLine](t, &buf), msgDropped); got.emitted != 0 {
		t.Errorf("a dead-lettered event logged as dropped")
	}
}

// TestEngine_SuspectAfterUsualAnswerTime: a subscription that usually
// answers in 600 ms is suspect after four times that, capped at
// SuspectAfter (1 s), not after the 200 ms bound of quick ones.
func TestEngine_SuspectAfterUsualAnswerTime(t *testing.T) {
	clock := fakeclock.New()
	o := fastOptions()
	o.Clock = clock
	o.MaxConcurrent, o.MaxParked = 1, 4
	o.DeliverTimeout = time.Hour
	gate := make(chan error)
	var mu sync.Mutex
	delivered := map[string]int{}
	s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
		if b.Subscription.Name == "slow" {
			select {
			case err := <-gate:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		mu.Lock()
		delivered[b.Subscription.Name]++
		mu.Unlock()
		return nil
	}}
	e := mustEngine(t, o, s, nil)
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() { // answer the slow requests left at the end
		<-done
		for {
			select {
			case gate <- nil:
			case <-time.After(100 * time.Millisecond):
				return
			}
		}
	}()
	healthyN := func() int {
		mu.Lock()
		defer mu.Unlock()
		return delivered["healthy"]
	}
	slow, healthy := newSub(e, "slow"), newSub(e, "healthy")
	mustPublish(t, e, []*eventgrid.EventSubscription{healthy}, newEvent("g0", 50))
	brokertest.Eventually(t, 5*time.Second, func() error {
		if healthyN() != 1 {
			return fmt.Errorf("healthy not proven yet")
		}
		return nil
	})
	// The first answer takes 600 ms.
	mustPublish(t, e, []*eventgrid.EventSubscription{slow}, newEvent("s1", 50))
	waitWatched(t, e, clock, 1)
	for range 6 {
		clock.Advance(100 * time.Millisecond)
	}
	gate <- nil
	waitInFlight(t, e, 0)

	mustPublish(t, e, []*eventgrid.EventSubscription{slow}, newEvent("s2", 50))
	waitWatched(t, e, clock, 1)
	mustPublish(t, e, []*eventgrid.EventSubscription{healthy}, newEvent("g1", 50))
	for range 9 {
		clock.Advance(100 * time.Millisecond)
	}
	if n := healthyN(); n != 1 {
		t.Fatalf("the slow request was suspect after 900 ms; its usual answer takes 600 ms")
	}
	for range 2 {
		clock.Advance(100 * time.Millisecond)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := healthyN(); n != 2 {
			return fmt.Errorf("healthy got %d of 2 events; the slow request should be suspect after 1 s", n)
		}
		return nil
	})
}

// TestEngine_SuspectCancelledWhenNoRoom: with the parked requests and the
// slow line's share both full, a proven subscription's request that turns
// suspect is cancelled as timed out rather than hold a fast-line worker.
func TestEngine_SuspectCancelledWhenNoRoom(t *testing.T) {
	e, clock, s := suspectEngine(t, 2, 1) // the slow line's share is one worker
	a, b, c, healthy := newSub(e, "a"), newSub(e, "b"), newSub(e, "c"), newSub(e, "healthy")
	prove(t, e, s, a, b, c, healthy)
	s.hang("a", "b", "c")
	mustPublish(t, e, []*eventgrid.EventSubscription{a, b}, newEvent("x", 50))
	waitWatched(t, e, clock, 2)
	for range 3 {
		clock.Advance(100 * time.Millisecond)
	}
	// One parked, one in the slow share; a new worker in the freed slot.
	mustPublish(t, e, []*eventgrid.EventSubscription{c}, newEvent("y", 50))
	waitWatched(t, e, clock, 3)
	for range 3 {
		clock.Advance(100 * time.Millisecond)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		st, _ := e.QueueStats(c)
		if st.InFlight != 0 || st.Backoff[0] != 1 || !strings.Contains(st.LastError, "cancelled to free its worker") {
			return fmt.Errorf("c's suspect request not cancelled: %+v", st)
		}
		return nil
	})
	mustPublish(t, e, []*eventgrid.EventSubscription{healthy}, newEvent("g", 50))
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(healthy); s.deliveredTo("healthy") != 2 || st.InFlight != 0 {
			return fmt.Errorf("healthy got %d of 2 events, %d requests in flight", s.deliveredTo("healthy"), st.InFlight)
		}
		return nil
	})
	if st := e.Stats(); st.InFlight != 2 {
		t.Errorf("%d requests in flight, want a's parked one and b's in the slow share", st.InFlight)
	}
}
