package dispatch_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// TestPublish_Split: one request reaches the push engine and the queue
// store, each subscription with its own events, and counts in one budget.
func TestPublish_Split(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	p, q := b.pushSub("p"), b.queueSub("q")
	if err := b.publish(3, 100, p, q); err != nil {
		t.Fatal(err)
	}
	if n := b.engine.HeldEvents(p); n != 3 {
		t.Errorf("the push engine holds %d events of p; want 3", n)
	}
	if c, _ := b.store.Counts(q); c.Available != 3 {
		t.Errorf("the queue holds %+v; want 3 available", c)
	}
	if n := b.engine.HeldEvents(q) + b.store.HeldEvents(p); n != 0 {
		t.Errorf("a mode holds %d events of the other mode's subscription", n)
	}
	if events, bytes := b.budget.Used(); events != 6 || bytes != 300 {
		t.Errorf("budget holds %d deliveries, %d bytes; want 6, 300 (the request's bytes once)", events, bytes)
	}
	if events, bytes := b.held(q); events != 3 || bytes != 300 {
		t.Errorf("q holds %d/%d; want 3/300", events, bytes)
	}
}

// TestPublish_OneDecision: whatever its subscriptions' delivery modes, a
// request that can never fit gets 413 (EPayloadTooLarge) and one that does
// not fit now 503 (EQueueFull) naming the subscription whose share is
// full; either way nothing of it is queued, in either mode.
func TestPublish_OneDecision(t *testing.T) {
	for _, mix := range []string{"push", "queue", "both"} {
		t.Run(mix, func(t *testing.T) {
			subs := func(b *broker, tag string) []*eventgrid.EventSubscription {
				var out []*eventgrid.EventSubscription
				if mix != "queue" {
					out = append(out, b.pushSub("p"+tag))
				}
				if mix != "push" {
					out = append(out, b.queueSub("q"+tag))
				}
				return out
			}
			t.Run("NeverFitsShare", func(t *testing.T) {
				b := newBroker(t, budget.Limits{EventsPerSubscription: 5}, nil)
				err := b.publish(6, 100, subs(b, "")...)
				if code(err) != eventgrid.EPayloadTooLarge || !strings.Contains(err.Error(), "broker__maxQueuedEventsPerSubscription") {
					t.Fatalf("a batch of 6 with a share of 5: %v; want EPayloadTooLarge naming the key", err)
				}
				expectNothingQueued(t, b)
			})
			t.Run("NeverFitsBroker", func(t *testing.T) {
				b := newBroker(t, budget.Limits{Events: 5}, nil)
				all := subs(b, "")
				err := b.publish(6/len(all), 100, all...) // 6 deliveries, within each share
				if code(err) != eventgrid.EPayloadTooLarge || !strings.Contains(err.Error(), "broker__maxQueuedEvents ") {
					t.Fatalf("6 deliveries with a broker-wide bound of 5: %v; want EPayloadTooLarge", err)
				}
				expectNothingQueued(t, b)
			})
			t.Run("ShareFull", func(t *testing.T) {
				b := newBroker(t, budget.Limits{EventsPerSubscription: 5}, nil)
				full := subs(b, "full")
				if err := b.publish(4, 100, full...); err != nil {
					t.Fatal(err)
				}
				before, _ := b.budget.Used()
				other := subs(b, "other")
				err := b.publish(2, 100, append(other, full[len(full)-1])...)
				name := full[len(full)-1].Name
				if code(err) != eventgrid.EQueueFull || !strings.Contains(err.Error(), "Event subscription "+name+" holds its share") {
					t.Fatalf("a request over %s's share: %v; want EQueueFull naming it", name, err)
				}
				if after, _ := b.budget.Used(); after != before {
					t.Fatalf("the refused request left %d deliveries held; want %d", after, before)
				}
				for _, s := range other {
					if n := b.d.HeldEvents(s); n != 0 {
						t.Errorf("%s holds %d events of the refused request", s.Name, n)
					}
				}
				if n := b.rej.n.Load(); n != int64(2*(len(other)+1)) {
					t.Errorf("%d deliveries counted as refused; want %d", n, 2*(len(other)+1))
				}
			})
		})
	}
}

func expectNothingQueued(t *testing.T, b *broker) {
	t.Helper()
	if events, bytes := b.budget.Used(); events != 0 || bytes != 0 {
		t.Fatalf("budget holds %d/%d after a refusal", events, bytes)
	}
	for _, h := range b.d.Holdings().Subscriptions {
		if h.Events != 0 {
			t.Fatalf("%s holds %d events after a refusal", h.Subscription.Name, h.Events)
		}
	}
}

// TestPublish_ConvertedCopiesCount: an event is converted once per
// delivery schema, whatever the modes of the subscriptions that take it;
// the copy counts in the broker's budget once and in each subscription's
// share by its own size.
func TestPublish_ConvertedCopiesCount(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	transform := func(_ eventgrid.Topic, sub *eventgrid.EventSubscription, ev *eventgrid.Event) []byte {
		if sub.EventDeliverySchema != eventgrid.CloudEventSchemaV1_0 {
			return ev.Body
		}
		mu.Lock()
		calls++
		mu.Unlock()
		return append(append([]byte(nil), ev.Body...), ev.Body...) // twice as long
	}
	b := newBroker(t, budget.Limits{BytesPerSubscription: 500}, transform)
	a := b.pushSub("a")
	a.EventDeliverySchema = eventgrid.CloudEventSchemaV1_0
	subs := []*eventgrid.EventSubscription{a, b.queueSub("q1"), b.queueSub("q2"), b.pushSub("plain")}
	if err := b.publish(2, 100, subs...); err != nil {
		t.Fatal(err)
	}
	if _, bytes := b.budget.Used(); bytes != 200+400 {
		t.Errorf("budget holds %d bytes; want 600: the events and one converted copy of each", bytes)
	}
	if calls != 2 {
		t.Errorf("%d conversions; want one per event", calls)
	}
	if _, bytes := b.held(subs[1]); bytes != 400 {
		t.Errorf("a converting queue subscription's share holds %d bytes; want 400", bytes)
	}
	// Each converting subscription holds 400 of its 500 bytes, so one more
	// 100-byte event, 200 bytes converted, does not fit its share.
	if err := b.publish(1, 100, subs[1]); code(err) != eventgrid.EQueueFull {
		t.Errorf("a converted event over the subscription's byte share: %v, want QueueFull", err)
	}
	if err := b.publish(1, 100, subs[3]); err != nil {
		t.Errorf("an unconverted event within the share: %v", err)
	}
}

// TestPublish_Stopping: once a mode has stopped, a publish gets
// EUnavailable and holds nothing.
func TestPublish_Stopping(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	p, q := b.pushSub("p"), b.queueSub("q")
	_ = b.store.Close(context.Background())
	if err := b.publish(1, 100, p, q); code(err) != eventgrid.EUnavailable {
		t.Fatalf("publish while stopping: %v; want EUnavailable", err)
	}
	expectNothingQueued(t, b)
}
