package push_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// goroutinesBackTo waits for the goroutine count to fall to at most n.
func goroutinesBackTo(t *testing.T, n int) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if g := runtime.NumGoroutine(); g > n {
			return fmt.Errorf("%d goroutines, want at most %d", g, n)
		}
		return nil
	})
}

func TestEngine_GoroutinesBounded(t *testing.T) {
	base := runtime.NumGoroutine()
	o := fastOptions()
	o.MaxConcurrent = 20
	o.Backoff = [2]time.Duration{time.Hour, time.Hour}
	block := make(chan struct{})
	s := &sender{SendFn: func(ctx context.Context, _ *push.Batch) error {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return errFail
	}}
	e := push.New(o, s, nil, zerolog.Nop())
	var subs []*eventgrid.EventSubscription
	for i := range 200 {
		subs = append(subs, newSub(e, fmt.Sprint("s", i)))
	}
	for i := range 5 {
		mustPublish(t, e, subs, newEvent(fmt.Sprint(i), 50))
	}
	// The unproven subscriptions hold half the pool, and the parked
	// requests beside it: twice the pool by default.
	parked := 2 * o.MaxConcurrent
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st := e.Stats(); st.InFlight != o.MaxConcurrent/2+parked {
			return fmt.Errorf("%d in flight", st.InFlight)
		}
		return nil
	})
	// 200 backlogged subscriptions, and no more goroutines than the pool
	// and the parked requests.
	if g := runtime.NumGoroutine(); g > base+o.MaxConcurrent+parked+2 {
		t.Errorf("%d goroutines with 200 backlogged subscriptions; the pool is %d, %d may be parked (base %d)", g, o.MaxConcurrent, parked, base)
	}
	for _, sub := range subs[:100] {
		e.SubscriptionDeleted(sub)
	}
	close(block)
	closeWithin(e, 5*time.Second)
	goroutinesBackTo(t, base)
}

func TestEngine_CloseRaces(t *testing.T) {
	base := runtime.NumGoroutine()
	for round := range 20 {
		o := fastOptions()
		o.Backoff = [2]time.Duration{time.Millisecond, 2 * time.Millisecond}
		o.MaxConcurrent = 8
		o.LogRateBurst, o.LogEventExpiry, o.LogDeliveryFailure = 1, true, true
		var n int
		var mu sync.Mutex
		s := &sender{SendFn: func(context.Context, *push.Batch) error {
			mu.Lock()
			defer mu.Unlock()
			n++
			if n%3 == 0 {
				return nil
			}
			return errFail
		}}
		e := push.New(o, s, nil, zerolog.Nop())
		subs := []*eventgrid.EventSubscription{newSub(e, "a"), newSub(e, "b")}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					_ = publish(e, subs, newEvent(fmt.Sprint(w, "-", i), 50))
					if i%10 == 0 {
						e.SubscriptionPut(subs[i%2]) // an update
						c := newSub(e, fmt.Sprint("c", w, i))
						_ = publish(e, []*eventgrid.EventSubscription{c}, newEvent("c", 10))
						e.SubscriptionDeleted(c)
					}
				}
			}()
		}
		time.Sleep(time.Duration(round%5) * time.Millisecond) // vary where Close lands
		closeWithin(e, time.Second)
		wg.Wait()
		if st := e.Stats(); st.QueuedEvents != 0 || st.QueuedBytes != 0 {
			t.Fatalf("round %d: budget after Close: %+v", round, st)
		}
	}
	goroutinesBackTo(t, base)
}
