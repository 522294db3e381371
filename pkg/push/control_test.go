package push_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// gateSender holds the requests of events whose id starts with "hang"
// until the test ends, and those of the other events, while gated, until
// open is called or the test ends; then it answers with err.
type gateSender struct {
	mu        sync.Mutex
	err       error
	gated     bool
	gate      chan struct{}
	end       chan struct{}
	delivered map[string]int
}

func newGateSender() *gateSender {
	return &gateSender{gate: make(chan struct{}), end: make(chan struct{}), delivered: map[string]int{}}
}

func (s *gateSender) Send(ctx context.Context, b *push.Batch) error {
	id := idOf(b.Bodies[0])
	s.mu.Lock()
	gate, gated := s.gate, s.gated
	s.mu.Unlock()
	var wait <-chan struct{}
	switch {
	case strings.HasPrefix(id, "hang"):
		wait = s.end
	case gated:
		wait = gate
	}
	if wait != nil {
		select {
		case <-wait:
		case <-s.end:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.delivered[id]++
	}
	return s.err
}

// hold makes the next requests wait for open, which answers them with err.
func (s *gateSender) hold(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gated, s.err = true, err
}

func (s *gateSender) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.gate)
	s.gate, s.gated = make(chan struct{}), false
}

func (s *gateSender) answer(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func (s *gateSender) got(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered[id]
}

// controlEngine is an engine on a fake clock, with one subscription whose
// concurrency has grown to max by successes.
func controlEngine(t *testing.T, max int) (*push.Engine, *fakeclock.Clock, *gateSender, *eventgrid.EventSubscription) {
	t.Helper()
	clock := fakeclock.New()
	o := fastOptions()
	o.Clock = clock
	o.MaxPerSubscription = max
	o.DeliverTimeout = time.Hour
	o.Backoff = [2]time.Duration{time.Hour, time.Hour}
	s := newGateSender()
	e := mustEngine(t, o, s, nil)
	t.Cleanup(func() { close(s.end) }) // before the engine is closed
	sub := newSub(e, "s")
	for i := range max {
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint("warm", i), 50))
		brokertest.Eventually(t, 5*time.Second, func() error {
			if s.got(fmt.Sprint("warm", i)) != 1 {
				return fmt.Errorf("warm-up event %d not delivered", i)
			}
			return nil
		})
	}
	waitLimit(t, e, sub, max)
	return e, clock, s, sub
}

func waitLimit(t *testing.T, e *push.Engine, sub *eventgrid.EventSubscription, want int) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(sub); st.ConcurrencyLimit != want || st.InFlight != 0 {
			return fmt.Errorf("concurrency limit %d with %d in flight, want %d and none", st.ConcurrencyLimit, st.InFlight, want)
		}
		return nil
	})
}

// publishWave publishes n events, one request each, and waits until all
// are in flight.
func publishWave(t *testing.T, e *push.Engine, sub *eventgrid.EventSubscription, prefix string, n int) {
	t.Helper()
	for i := range n {
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint(prefix, i), 50))
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(sub); st.InFlight != n {
			return fmt.Errorf("%d of %d requests in flight", st.InFlight, n)
		}
		return nil
	})
}

// waitDeliveredBeside waits until events g0 to g(n-1) are delivered, and
// only the stalled requests, stalled of them, are in flight.
func waitDeliveredBeside(t *testing.T, e *push.Engine, s *gateSender, sub *eventgrid.EventSubscription, n, stalled int) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		for i := range n {
			if s.got(fmt.Sprint("g", i)) != 1 {
				return fmt.Errorf("g%d not delivered beside the stalled requests", i)
			}
		}
		if st, _ := e.QueueStats(sub); st.InFlight != stalled {
			return fmt.Errorf("%d requests in flight, want the %d stalled ones alone", st.InFlight, stalled)
		}
		return nil
	})
}

// TestControl_FastFailuresKeepTheLimit: 500s, 408s and dropped connections
// are failures of one request each: the events wait for their retry and
// the subscription's concurrency stays.
func TestControl_FastFailuresKeepTheLimit(t *testing.T) {
	e, _, s, sub := controlEngine(t, 16)
	for _, err := range []error{statusErr{code: 500}, statusErr{code: 408}, errFail} {
		s.hold(err)
		publishWave(t, e, sub, fmt.Sprint(err, "-"), 16)
		s.open()
		waitLimit(t, e, sub, 16)
	}
	if st, _ := e.QueueStats(sub); st.Backoff[0] != 48 {
		t.Errorf("%d events wait for their retry, want the 48 that failed", st.Backoff[0])
	}
}

// TestControl_OverloadOncePerRoundTrip: sixteen 503s to the requests of one
// round trip lower the limit once, by half the share of overload signals
// among the answers since the warm-up; the 503s to requests sent after that
// halve it, all answers since being 503s; and the limit recovers once the
// overload has ended.
func TestControl_OverloadOncePerRoundTrip(t *testing.T) {
	e, clock, s, sub := controlEngine(t, 16)
	s.hold(statusErr{code: 503})
	publishWave(t, e, sub, "a", 16)
	s.open()
	waitLimit(t, e, sub, 15)

	clock.Advance(time.Millisecond) // the next round's requests start later
	s.hold(statusErr{code: 429, retryAfter: time.Second})
	publishWave(t, e, sub, "b", 15)
	s.open()
	waitLimit(t, e, sub, 7)

	// The overload ends: one more per round trip at first, then, once no
	// overload has come for two seconds, one more per success.
	s.answer(nil)
	for i := range 7 {
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint("c", i), 50))
	}
	waitLimit(t, e, sub, 8)
	clock.Advance(2 * time.Second)
	for i := range 8 {
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint("d", i), 50))
	}
	waitLimit(t, e, sub, 16)
}

// TestControl_StalledRequestFreesItsSlot: with one request allowed, a
// request that hangs holds the subscription only until it has stalled:
// then one more is sent, and once that one is answered, the rest follow,
// while the stalled request waits for its answer.
func TestControl_StalledRequestFreesItsSlot(t *testing.T) {
	e, clock, s, sub := controlEngine(t, 1)
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("hang0", 50))
	waitWatched(t, e, clock, 1)
	for i := range 3 {
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint("g", i), 50))
	}
	// The subscription usually answers at once: its requests stall after
	// the least bound, 10 ms, checked every 5 ms.
	clock.Advance(5 * time.Millisecond)
	if st, _ := e.QueueStats(sub); st.InFlight != 1 || st.Ready != 3 {
		t.Fatalf("before the stall bound: %+v, want the hung request alone in flight", st)
	}
	clock.Advance(20 * time.Millisecond)
	// The sender counts a delivery before its request ends: g2's is done
	// with once the stalled request is alone in flight again.
	waitDeliveredBeside(t, e, s, sub, 3, 1)
	if st, _ := e.QueueStats(sub); st.InFlight != 1 || st.ConcurrencyLimit != 1 {
		t.Errorf("%+v, want the stalled request in flight and the limit as it was", st)
	}
}

// TestControl_StalledBeyondTheBound: when more requests of a subscription
// have stalled than MaxPerSubscription, the one in flight longest is
// cancelled, to be retried by its policy.
func TestControl_StalledBeyondTheBound(t *testing.T) {
	e, clock, s, sub := controlEngine(t, 1)
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("hang0", 50), newEvent("hang1", 50), newEvent("g", 50))
	waitWatched(t, e, clock, 1)
	clock.Advance(30 * time.Millisecond) // hang0 stalls; hang1 goes to learn whether the endpoint hangs
	waitWatched(t, e, clock, 2)
	if st, _ := e.QueueStats(sub); st.Backoff[0] != 0 || st.Ready != 1 {
		t.Fatalf("one stalled with a bound of one: %+v, want nothing cancelled and g waiting", st)
	}
	clock.Advance(30 * time.Millisecond) // hang1 stalls too: one more than the bound
	brokertest.Eventually(t, 5*time.Second, func() error {
		st, _ := e.QueueStats(sub)
		if st.Backoff[0] != 1 || !strings.Contains(st.LastError, "past its usual answer time") {
			return fmt.Errorf("the longest stalled request not cancelled: %+v", st)
		}
		return nil
	})
	// g goes beside hang1, and is answered.
	brokertest.Eventually(t, 5*time.Second, func() error {
		if s.got("g") != 1 {
			return fmt.Errorf("g not delivered beside the stalled request")
		}
		return nil
	})
}

// TestControl_RequestsStalledTogether: requests that fill the
// subscription's limit and stall together leave nothing sent after them,
// so the endpoint looks hung. One probe is sent at once; its answer shows
// that only those requests hang, and the rest of the queue goes at the
// full limit beside them, instead of waiting for their timeouts.
func TestControl_RequestsStalledTogether(t *testing.T) {
	e, clock, s, sub := controlEngine(t, 4)
	publishWave(t, e, sub, "hang", 4)
	for i := range 10 {
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint("g", i), 50))
	}
	waitWatched(t, e, clock, 4)
	if st, _ := e.QueueStats(sub); st.InFlight != 4 || st.Ready != 10 {
		t.Fatalf("before the stall bound: %+v, want the four requests in flight and ten waiting", st)
	}
	clock.Advance(30 * time.Millisecond)
	waitDeliveredBeside(t, e, s, sub, 10, 4)
	if st, _ := e.QueueStats(sub); st.ConcurrencyLimit != 4 || st.Backoff[0] != 0 {
		t.Errorf("%+v, want the limit as it was and nothing cancelled", st)
	}
}
