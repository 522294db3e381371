package desired_test

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// armed returns the waits of clk's armed timers, from its time.
func armed(clk *fakeclock.Clock) []time.Duration {
	var out []time.Duration
	for _, at := range clk.Armed() {
		out = append(out, at.Sub(clk.Now()))
	}
	return out
}

// flakyStore fails the put of subscription "flaky" for a passing reason
// (as a failed validation handshake) until healed.
type flakyStore struct {
	*registry.Registry
	healed atomic.Bool
	puts   atomic.Int32
}

func (s *flakyStore) PutSubscription(ctx context.Context, sub eventgrid.EventSubscription) (*eventgrid.EventSubscription, bool, error) {
	if sub.Name == "flaky" {
		s.puts.Add(1)
		if !s.healed.Load() {
			return nil, false, eventgrid.Passing(eventgrid.Errorf(eventgrid.EInvalidDestination,
				"The EventGrid validation handshake with properties.destination.properties.endpointUrl failed: the endpoint could not be reached (connection refused)."))
		}
	}
	return s.Registry.PutSubscription(ctx, sub)
}

// TestRetry: an entry that failed for a passing reason is applied again
// after a back-off that doubles up to its maximum, starts over when the
// declaration changes and stops once the entry applies; an entry wrong in
// itself is not retried. /readyz's status shows the skipped entries and the
// next retry.
func TestRetry(t *testing.T) {
	store := &flakyStore{Registry: registry.New(registry.DefaultOptions(), nil)}
	clock := fakeclock.New()
	clock.AdvanceTo(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	r := desired.NewReconciler(store, zerolog.Nop(), desired.Options{RetryMin: time.Second, RetryMax: 4 * time.Second, Clock: clock})
	ctx := context.Background()
	d1 := doc(map[string]string{"t": `{}`}, map[string]string{"flaky": hook("t", "https://sink.example/f")})
	apply := func(d string) desired.Result {
		t.Helper()
		res, err := r.Apply(ctx, desired.Inline, []byte(d))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := apply(d1)
	msg := res.Errors.EventSubscriptions["flaky"]
	if !res.Retrying() || !strings.Contains(msg, "Message='The EventGrid validation handshake with destination.properties.endpointUrl failed") {
		t.Fatalf("first apply: %+v, want flaky skipped, in the declaration's terms, and retried", res)
	}
	st := r.Status()
	if len(st) != 1 || st[0].Skipped == nil || st[0].Skipped.EventSubscriptions["flaky"] != msg || st[0].NextRetry != "2026-01-02T03:04:06Z" {
		t.Errorf("status %+v", st)
	}
	due := r.Retries(desired.Inline)
	var waits []time.Duration
	for range 4 {
		w := armed(clock)
		if len(w) != 1 {
			t.Fatalf("armed %v, want one timer", w)
		}
		waits = append(waits, w[0])
		clock.AdvanceToNext()
		select {
		case <-due:
		default:
			t.Fatal("no retry signalled")
		}
		apply(d1)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second}; !reflect.DeepEqual(waits, want) {
		t.Errorf("back-off %v, want %v", waits, want)
	}

	// A changed declaration starts the back-off over.
	d2 := doc(map[string]string{"t": `{}`}, map[string]string{"flaky": hook("t", "https://sink.example/f2")})
	apply(d2)
	if w := armed(clock); !reflect.DeepEqual(w, []time.Duration{time.Second}) {
		t.Errorf("after a change, armed %v, want [1s]", w)
	}

	// Healed: the entry applies and nothing more is scheduled.
	store.healed.Store(true)
	clock.AdvanceToNext()
	<-due
	res = apply(d2)
	if res.Retrying() || res.Errors.Len() != 0 || len(res.Subscriptions) != 1 {
		t.Errorf("healed: %+v", res)
	}
	if w := armed(clock); len(w) != 0 {
		t.Errorf("healed: armed %v, want none", w)
	}
	if st := r.Status(); st[0].Skipped != nil || st[0].NextRetry != "" {
		t.Errorf("healed: status %+v", st)
	}

	// Wrong in itself: skipped, not retried.
	res = apply(doc(map[string]string{"t": `{}`}, map[string]string{"flaky": hook("t", "https://sink.example/f2"), "bad": hook("t", "http://sink.example/plain")}))
	if res.Errors.Len() != 1 || res.Retrying() || len(armed(clock)) != 0 {
		t.Errorf("a bad entry: %+v, armed %v; want it skipped and not retried", res, armed(clock))
	}
}

// TestFollow: desired_config never changes, yet its entries that failed
// for a passing reason converge: Follow applies it again when a retry is
// due.
func TestFollow(t *testing.T) {
	store := &flakyStore{Registry: registry.New(registry.DefaultOptions(), nil)}
	clock := fakeclock.New()
	r := desired.NewReconciler(store, zerolog.Nop(), desired.Options{Clock: clock})
	r.Expect(desired.Inline)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Follow(ctx, desired.Inline, []byte(doc(map[string]string{"t": `{}`}, map[string]string{"flaky": hook("t", "https://sink.example/f")})), nil)
	}()
	t.Cleanup(func() { cancel(); <-done })
	brokertest.Eventually(t, 5*time.Second, func() error {
		if !r.Ready() || len(armed(clock)) != 1 {
			return brokertest.ErrNotYet
		}
		return nil
	})
	store.healed.Store(true)
	clock.AdvanceToNext()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if _, err := store.Subscription(ctx, "t", "flaky"); err != nil {
			return err
		}
		return nil
	})
	if n := store.puts.Load(); n != 2 {
		t.Errorf("%d puts of flaky, want 2", n)
	}
}
