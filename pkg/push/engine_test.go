package push_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

func TestEngine_Retry(t *testing.T) {
	t.Run("FailsThenSucceedsOnSchedule", func(t *testing.T) {
		var calls atomic.Int32
		s := &sender{SendFn: func(context.Context, *push.Batch) error {
			if calls.Add(1) <= 3 {
				return errFail
			}
			return nil
		}}
		o := fastOptions()
		e := mustEngine(t, o, s, nil)
		sub := newSub(e, "s")
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e1", 100))
		// The sender counts the delivery before its request ends, and the
		// event leaves the budget once it has.
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := s.Delivered("s")["e1"]; n != 1 {
				return fmt.Errorf("delivered %d times", n)
			}
			if st := e.Stats(); st.QueuedEvents != 0 || st.QueuedBytes != 0 {
				return fmt.Errorf("delivered; budget not returned yet: %+v", st)
			}
			return nil
		})
		bs := s.Calls()
		if len(bs) != 4 {
			t.Fatalf("%d attempts, want 4", len(bs))
		}
		// Immediate, then the first back-off, then the second twice.
		want := []time.Duration{o.Backoff[0], o.Backoff[1], o.Backoff[1]}
		for i, w := range want {
			gap := bs[i+1].At.Sub(bs[i].At)
			if gap < w || gap > w+time.Second {
				t.Errorf("gap before attempt %d = %v, want %v (+ scheduling slack)", i+2, gap, w)
			}
			if bs[i+1].DeliveryCount != i+1 {
				t.Errorf("attempt %d DeliveryCount = %d, want %d", i+2, bs[i+1].DeliveryCount, i+1)
			}
		}
	})

	t.Run("MaxDeliveryAttempts", func(t *testing.T) {
		s := &sender{SendFn: func(context.Context, *push.Batch) error { return errFail }}
		m := newMetrics()
		e := mustEngine(t, fastOptions(), s, m)
		sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
			s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 3}
		})
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e1", 100))
		brokertest.Eventually(t, 5*time.Second, func() error {
			if m.droppedN("s", outcome.MaxDeliveryAttemptsExceeded) != 1 {
				return errors.New("not dropped yet")
			}
			return nil
		})
		if n := len(s.Calls()); n != 3 {
			t.Errorf("%d attempts, want 3", n)
		}
		if e.Stats().QueuedEvents != 0 {
			t.Errorf("budget not returned")
		}
	})

	t.Run("TimeToLive", func(t *testing.T) {
		// On the fake clock: on the system clock an attempt the engine
		// took just before the TTL reaches the sender, which stamps it,
		// just after it when the machine is slow.
		const ttl = 400 * time.Millisecond
		e, clock, s, m := clockedEngine(t, func(o *push.Options) {
			o.DefaultTTL, o.Backoff = ttl, fastOptions().Backoff
		}, nil)
		got := runSchedule(t, e, clock, s, m, newSub(e, "s"))
		m.waitDropped(t, "s", outcome.TimeToLiveExceeded, 1)
		for _, at := range got {
			if at > ttl {
				t.Errorf("attempt at %v after acceptance, past the TTL", at)
			}
		}
		if len(got) < 2 {
			t.Errorf("%d attempts, want at least 2 before the TTL", len(got))
		}
	})

	t.Run("SubscriptionPolicyWins", func(t *testing.T) {
		s := &sender{SendFn: func(context.Context, *push.Batch) error { return errFail }}
		m := newMetrics()
		o := fastOptions()
		o.DefaultMaxDeliveryAttempts = 2
		e := mustEngine(t, o, s, m)
		sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
			s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 4}
		})
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e1", 100))
		brokertest.Eventually(t, 5*time.Second, func() error {
			if m.droppedN("s", outcome.MaxDeliveryAttemptsExceeded) != 1 {
				return errors.New("not dropped yet")
			}
			return nil
		})
		if n := len(s.Calls()); n != 4 {
			t.Errorf("%d attempts, want 4", n)
		}
	})
}

func TestEngine_Batching(t *testing.T) {
	// block holds the first request until released, so that events queue up
	// behind it and the next batches can be observed whole.
	type blocker struct {
		once    sync.Once
		started chan struct{}
		release chan struct{}
	}
	newBlocker := func() *blocker { return &blocker{started: make(chan struct{}), release: make(chan struct{})} }
	setup := func(t *testing.T, mod func(*eventgrid.EventSubscription)) (*sender, *blocker, *push.Engine, *eventgrid.EventSubscription) {
		bl := newBlocker()
		s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
			first := false
			bl.once.Do(func() { first = true; close(bl.started) })
			if first {
				<-bl.release
			}
			return nil
		}}
		o := fastOptions()
		o.MaxPerSubscription = 1
		o.DefaultMaxBatchBytes = 10000
		// A clock that stands still: the first request is held for as
		// long as the test takes to queue the others, and on the system
		// clock it would stall after 10 ms when the machine is slow, and
		// let the others go beside it.
		o.Clock = fakeclock.New()
		e := mustEngine(t, o, s, nil)
		return s, bl, e, newSub(e, "s", mod)
	}
	sizes := func(bs []sent) []int {
		var n []int
		for _, b := range bs {
			n = append(n, len(b.IDs()))
		}
		return n
	}

	t.Run("OffByDefault", func(t *testing.T) {
		s, bl, e, sub := setup(t, nil)
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("first", 50))
		<-bl.started
		for i := range 5 {
			mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint(i), 50))
		}
		close(bl.release)
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := len(s.Delivered("s")); n != 6 {
				return fmt.Errorf("%d delivered", n)
			}
			return nil
		})
		if got := sizes(s.Calls()); !slices.Equal(got, []int{1, 1, 1, 1, 1, 1}) {
			t.Errorf("batch sizes %v", got)
		}
	})

	for _, tc := range []struct {
		name string
		mod  func(*eventgrid.EventSubscription)
		size int
	}{
		{"CapByCount", func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 3 }, 50},
		// 1 KB cap: the array's brackets and commas count, so 3 events of
		// 300 bytes fit (2+300*3+2 = 904) and a fourth does not; the default
		// count cap (10) does not bind.
		{"CapByBytes", func(s *eventgrid.EventSubscription) { s.Destination.PreferredBatchSizeInKilobytes = 1 }, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, bl, e, sub := setup(t, tc.mod)
			mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("first", 50))
			<-bl.started
			var evs []*eventgrid.Event
			for i := range 7 {
				evs = append(evs, newEvent(fmt.Sprint(i), tc.size))
			}
			mustPublish(t, e, []*eventgrid.EventSubscription{sub}, evs...)
			close(bl.release)
			brokertest.Eventually(t, 5*time.Second, func() error {
				if n := len(s.Delivered("s")); n != 8 {
					return fmt.Errorf("%d delivered", n)
				}
				return nil
			})
			if got := sizes(s.Calls()); !slices.Equal(got, []int{1, 3, 3, 1}) {
				t.Errorf("batch sizes %v, want [1 3 3 1]", got)
			}
		})
	}

	t.Run("OversizeEventGoesAlone", func(t *testing.T) {
		s, bl, e, sub := setup(t, func(s *eventgrid.EventSubscription) { s.Destination.PreferredBatchSizeInKilobytes = 1 })
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("first", 50))
		<-bl.started
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("a", 100), newEvent("big", 5000), newEvent("b", 100), newEvent("c", 100))
		close(bl.release)
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := len(s.Delivered("s")); n != 5 {
				return fmt.Errorf("%d delivered", n)
			}
			return nil
		})
		var got [][]string
		for _, b := range s.Calls()[1:] {
			got = append(got, b.IDs())
		}
		want := [][]string{{"a"}, {"big"}, {"b", "c"}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("batches %v, want %v", got, want)
		}
	})

	t.Run("NeverWaitsToFill", func(t *testing.T) {
		s := &sender{}
		e := mustEngine(t, fastOptions(), s, nil)
		sub := newSub(e, "s", func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 50 })
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("only", 50))
		brokertest.Eventually(t, time.Second, func() error {
			if len(s.Delivered("s")) != 1 {
				return errors.New("not delivered")
			}
			return nil
		})
	})

	t.Run("FailedBatchSplits", func(t *testing.T) {
		var calls atomic.Int32
		s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
			if calls.Add(1) == 1 {
				return errFail
			}
			return nil
		}}
		o := fastOptions()
		o.MaxPerSubscription = 1
		e := mustEngine(t, o, s, nil)
		sub := newSub(e, "s", func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 10 })
		var evs []*eventgrid.Event
		for i := range 4 {
			evs = append(evs, newEvent(fmt.Sprint(i), 50))
		}
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, evs...)
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := len(s.Delivered("s")); n != 4 {
				return fmt.Errorf("%d delivered", n)
			}
			return nil
		})
		for _, b := range s.Calls()[1:] {
			if b.DeliveryCount != 1 {
				t.Errorf("retry batch %v has DeliveryCount %d, want 1", b.IDs(), b.DeliveryCount)
			}
		}
	})
}

func TestEngine_Isolation(t *testing.T) {
	t.Run("HangingSubscriberDoesNotDelayOthers", func(t *testing.T) {
		hang := make(chan struct{})
		defer close(hang)
		s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
			if b.Subscription.Name == "hanging" {
				select {
				case <-hang:
				case <-ctx.Done():
				}
				return ctx.Err()
			}
			return nil
		}}
		o := fastOptions()
		o.MaxConcurrent = 4
		o.MaxPerSubscription = 2
		o.DeliverTimeout = time.Minute
		e := mustEngine(t, o, s, nil)
		hanging, healthy := newSub(e, "hanging"), newSub(e, "healthy")
		for i := range 50 {
			mustPublish(t, e, []*eventgrid.EventSubscription{hanging, healthy}, newEvent(fmt.Sprint(i), 50))
		}
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := len(s.Delivered("healthy")); n != 50 {
				return fmt.Errorf("healthy got %d of 50", n)
			}
			return nil
		})
	})

	t.Run("ConcurrencyBound", func(t *testing.T) {
		var inflight, peak atomic.Int32
		s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
			n := inflight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			inflight.Add(-1)
			return nil
		}}
		o := fastOptions()
		o.MaxConcurrent = 3
		o.MaxPerSubscription = 10
		// No request is to turn suspect and be parked beside the pool, as
		// one may when the machine is busy.
		o.SuspectAfter = time.Minute
		e := mustEngine(t, o, s, nil)
		var subs []*eventgrid.EventSubscription
		for i := range 4 {
			subs = append(subs, newSub(e, fmt.Sprint("s", i)))
		}
		for i := range 100 {
			mustPublish(t, e, subs, newEvent(fmt.Sprint(i), 50))
		}
		brokertest.Eventually(t, 10*time.Second, func() error {
			if n := e.Stats().QueuedEvents; n != 0 {
				return fmt.Errorf("%d still queued", n)
			}
			return nil
		})
		if p := peak.Load(); p > 3 || p < 2 {
			t.Errorf("peak in flight %d, want at most 3 (and some concurrency)", p)
		}
	})
}

func TestEngine_BackPressure(t *testing.T) {
	up := atomic.Bool{}
	s := &sender{SendFn: func(context.Context, *push.Batch) error {
		if up.Load() {
			return nil
		}
		return errFail
	}}
	m := newMetrics()
	o := fastOptions()
	limits(&o, budget.Limits{Events: 10, Bytes: 1 << 20})
	e := mustEngine(t, o, s, m)
	d := &rejections{}
	a, b := newSub(e, "a"), newSub(e, "b")
	both := []*eventgrid.EventSubscription{a, b}
	for i := range 5 {
		mustPublish(t, e, both, newEvent(fmt.Sprint(i), 100))
	}
	// Full: 10 deliveries queued. A request of one more event (two
	// deliveries) is refused whole.
	err := publishVia(dispatch.New(dispatch.Options{Push: e, Budget: push.BudgetOf(e), Metrics: d}), both, newEvent("x", 100))
	if eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		t.Fatalf("Publish at the limit = %v, want EQueueFull", err)
	}
	if st := e.Stats(); st.QueuedEvents != 10 {
		t.Fatalf("queued %d after a refused publish, want 10", st.QueuedEvents)
	}
	if d.n.Load() != 1 {
		t.Errorf("rejected = %d requests, want 1", d.n.Load())
	}
	// The subscriber comes back: the queue drains and publishing works again.
	up.Store(true)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := e.Stats().QueuedEvents; n != 0 {
			return fmt.Errorf("%d still queued", n)
		}
		return nil
	})
	mustPublish(t, e, both, newEvent("y", 100))
	brokertest.Eventually(t, 5*time.Second, func() error {
		if s.Delivered("a")["y"] != 1 || s.Delivered("b")["y"] != 1 {
			return errors.New("y not delivered to both")
		}
		return nil
	})

	t.Run("Bytes", func(t *testing.T) {
		s := &sender{SendFn: func(context.Context, *push.Batch) error { return errFail }}
		o := fastOptions()
		limits(&o, budget.Limits{Bytes: 1000})
		e := mustEngine(t, o, s, nil)
		a, b := newSub(e, "a"), newSub(e, "b")
		// One event shared by two subscriptions counts its bytes once.
		mustPublish(t, e, []*eventgrid.EventSubscription{a, b}, newEvent("1", 600))
		if st := e.Stats(); st.QueuedBytes != 600 {
			t.Errorf("QueuedBytes = %d, want 600", st.QueuedBytes)
		}
		if err := publish(e, []*eventgrid.EventSubscription{a}, newEvent("2", 300), newEvent("3", 300)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
			t.Errorf("Publish over the byte limit = %v, want EQueueFull", err)
		}
		if st := e.Stats(); st.QueuedBytes != 600 || st.QueuedEvents != 2 {
			t.Errorf("after refusal: %d bytes, %d events; want 600, 2", st.QueuedBytes, st.QueuedEvents)
		}
	})
}

func TestEngine_Lifecycle(t *testing.T) {
	t.Run("UpdateAppliesToQueuedEvents", func(t *testing.T) {
		var failing atomic.Bool
		failing.Store(true)
		// On the fake clock the six first attempts fail at the same time,
		// and their retries fall due together. On the system clock they
		// fall due as far apart as the attempts were, and when the machine
		// is slow each was retried alone.
		e, clock, s, _ := clockedEngine(t, func(o *push.Options) { o.MaxPerSubscription = 1 }, func(int) error {
			if failing.Load() {
				return errFail
			}
			return nil
		})
		sub := newSub(e, "s")
		var evs []*eventgrid.Event
		for i := range 6 {
			evs = append(evs, newEvent(fmt.Sprint(i), 50))
		}
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, evs...)
		waitStats(t, e, sub, func(st push.QueueStats) bool { return st.Backoff[0] == 6 && st.InFlight == 0 })
		// Turn batching on while the events wait in back-off.
		upd := *sub
		upd.Destination.MaxEventsPerBatch = 10
		e.SubscriptionPut(&upd)
		failing.Store(false)
		clock.AdvanceToNext()
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := len(s.Delivered("s")); n != 6 {
				return fmt.Errorf("%d delivered", n)
			}
			return nil
		})
		batched := false
		for _, b := range s.Calls() {
			batched = batched || (b.Err == nil && len(b.IDs()) >= 2)
		}
		if !batched {
			t.Errorf("retries were not batched after the update: %v", s.Calls())
		}
	})

	t.Run("DeleteDiscardsQueue", func(t *testing.T) {
		s := &sender{SendFn: func(context.Context, *push.Batch) error { return errFail }}
		m := newMetrics()
		e := mustEngine(t, fastOptions(), s, m)
		sub := newSub(e, "s")
		for i := range 5 {
			mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint(i), 50))
		}
		brokertest.Eventually(t, 5*time.Second, func() error {
			if st, _ := e.QueueStats(sub); st.Backoff[0]+st.Backoff[1] != 5 {
				return fmt.Errorf("%+v", st)
			}
			return nil
		})
		e.SubscriptionDeleted(sub)
		// A worker releases the detached queue, outside the caller's locks.
		brokertest.Eventually(t, 5*time.Second, func() error {
			if st := e.Stats(); st.QueuedEvents != 0 || st.QueuedBytes != 0 {
				return fmt.Errorf("budget after delete: %+v", st)
			}
			if n := m.droppedN("s", outcome.SubscriptionDeleted); n != 5 {
				return fmt.Errorf("dropped %d as deleted, want 5", n)
			}
			return nil
		})
		// Publishing to the deleted subscription drops, never queues.
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("late", 50))
		if st := e.Stats(); st.QueuedEvents != 0 {
			t.Errorf("queued %d for a deleted subscription", st.QueuedEvents)
		}
	})

	t.Run("CloseFinishesInFlightAndDiscardsQueued", func(t *testing.T) {
		started, release := make(chan struct{}, 1), make(chan struct{})
		var finished atomic.Bool
		s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
			if idOf(b.Bodies[0]) == "0" {
				started <- struct{}{}
				<-release
				finished.Store(true)
			}
			return nil
		}}
		o := fastOptions()
		o.MaxPerSubscription = 1
		// A clock that stands still: on the system clock the first request
		// would stall after 10 ms, if the test were as slow to close the
		// engine, and let the others go beside it.
		clock := fakeclock.New()
		o.Clock = clock
		m := newMetrics()
		e := push.New(o, s, m, zerologNop())
		sub := newSub(e, "s")
		for i := range 5 {
			mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint(i), 50))
		}
		<-started
		closed := make(chan error, 1)
		go func() { closed <- closeWithin(e, 5*time.Second) }()
		// The first request is held until Close has stopped the queues,
		// and then the watchdog, whose timer the request armed: from then
		// on no batch is taken, whenever the request ends.
		brokertest.Eventually(t, 5*time.Second, func() error {
			if a := clock.Armed(); len(a) != 0 {
				return fmt.Errorf("timers armed at %v: Close has not stopped the watchdog yet", a)
			}
			return nil
		})
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) before the request in flight finished", err)
		default:
		}
		close(release)
		if err := <-closed; err != nil {
			t.Errorf("Close = %v; want nil, as nothing was cut off", err)
		}
		if !finished.Load() {
			t.Error("Close returned before the request in flight finished")
		}
		if n := m.droppedN("s", outcome.Shutdown); n != 4 {
			t.Errorf("Close discarded %d, want 4", n)
		}
		if err := publish(e, []*eventgrid.EventSubscription{sub}, newEvent("after", 10)); eventgrid.ErrorCode(err) != eventgrid.EUnavailable {
			t.Errorf("Publish after Close = %v, want EUnavailable", err)
		}
	})

	t.Run("CloseCancelsAtTimeout", func(t *testing.T) {
		s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
			<-ctx.Done()
			return ctx.Err()
		}}
		o := fastOptions()
		o.DeliverTimeout = time.Hour
		e := push.New(o, s, nil, zerologNop())
		sub := newSub(e, "s")
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("1", 50))
		brokertest.Eventually(t, time.Second, func() error {
			if e.Stats().InFlight != 1 {
				return errors.New("not in flight")
			}
			return nil
		})
		start := time.Now()
		err := closeWithin(e, 100*time.Millisecond)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Close took %v with a 100ms stop timeout", d)
		}
		if err == nil || !strings.Contains(err.Error(), "1 requests still in flight") {
			t.Errorf("Close = %v; want an error saying a request was cancelled", err)
		}
	})
}

// TestEngine_Conservation publishes thousands of events to subscriptions
// whose sender fails at random and checks that every (event, subscription)
// pair ends delivered or dropped by policy, and counted: none vanish.
func TestEngine_Conservation(t *testing.T) {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	s := &sender{SendFn: func(ctx context.Context, b *push.Batch) error {
		mu.Lock()
		fail := rng.IntN(100) < 30
		mu.Unlock()
		if fail {
			return errFail
		}
		return nil
	}}
	m := newMetrics()
	o := fastOptions()
	o.Backoff = [2]time.Duration{10 * time.Millisecond, 20 * time.Millisecond}
	o.DefaultMaxDeliveryAttempts = 3
	e := mustEngine(t, o, s, m)
	var subs []*eventgrid.EventSubscription
	for i := range 5 {
		subs = append(subs, newSub(e, fmt.Sprint("s", i), func(s *eventgrid.EventSubscription) {
			if i%2 == 0 {
				s.Destination.MaxEventsPerBatch = 7
			}
		}))
	}
	const n = 3000
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				mustPublish(t, e, subs, newEvent(fmt.Sprint(i), 64))
			}
		}()
	}
	wg.Wait()
	brokertest.Eventually(t, 30*time.Second, func() error {
		if q := e.Stats().QueuedEvents; q != 0 {
			return fmt.Errorf("%d deliveries still queued", q)
		}
		return nil
	})
	for _, sub := range subs {
		got := s.Delivered(sub.Name)
		dropped := m.droppedN(sub.Name, outcome.MaxDeliveryAttemptsExceeded) + m.droppedN(sub.Name, outcome.TimeToLiveExceeded)
		if len(got)+dropped < n {
			t.Errorf("%s: %d delivered + %d dropped < %d published", sub.Name, len(got), dropped, n)
		}
		// Every event is delivered or dropped, never both unaccounted.
		missing := 0
		for i := range n {
			if got[fmt.Sprint(i)] == 0 {
				missing++
			}
		}
		if missing != dropped {
			t.Errorf("%s: %d events never delivered but %d dropped by policy", sub.Name, missing, dropped)
		}
		if dropped == 0 {
			t.Errorf("%s: no event dropped; the test's failure rate is too low to exercise the policy", sub.Name)
		}
	}
	if st := e.Stats(); st.QueuedBytes != 0 {
		t.Errorf("QueuedBytes = %d after draining, want 0", st.QueuedBytes)
	}
}

func TestEngine_RequestSize(t *testing.T) {
	s := &sender{SendFn: func(_ context.Context, b *push.Batch) error {
		if idOf(b.Bodies[0]) == "stuck" {
			return errFail
		}
		return nil
	}}
	o := fastOptions()
	o.Backoff = [2]time.Duration{time.Hour, time.Hour}
	limits(&o, budget.Limits{Bytes: 10000})
	e := mustEngine(t, o, s, nil)
	sub := newSub(e, "s")
	// The request's events occupy 4000 bytes together, though only two
	// small ones were delivered: all 4000 stay counted while one waits.
	p := eventgrid.Publication{Topic: eventgrid.Topic{Name: "t"}, Size: 4000, Deliveries: []eventgrid.Delivery{
		{Event: newEvent("ok", 100), Subscriptions: []*eventgrid.EventSubscription{sub}},
		{Event: newEvent("stuck", 100), Subscriptions: []*eventgrid.EventSubscription{sub}},
	}}
	if err := dispatch.New(dispatch.Options{Push: e, Budget: push.BudgetOf(e)}).Publish(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st := e.Stats(); st.QueuedEvents != 1 || st.QueuedBytes != 4000 {
			return fmt.Errorf("queued %d events, %d bytes; want 1, 4000", st.QueuedEvents, st.QueuedBytes)
		}
		return nil
	})
	if push.BudgetOf(e).Admit(7000) {
		t.Error("Admit(7000) with 4000 of 10000 bytes held")
	}
	if !push.BudgetOf(e).Admit(6000) {
		t.Error("Admit(6000) refused with 4000 of 10000 bytes held")
	}
	e.SubscriptionDeleted(sub)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st := e.Stats(); st.QueuedBytes != 0 {
			return fmt.Errorf("QueuedBytes = %d after the last delivery went", st.QueuedBytes)
		}
		return nil
	})
}

// rejections counts the requests a dispatcher refuses.
type rejections struct{ n atomic.Int64 }

func (r *rejections) Rejected(string) { r.n.Add(1) }
