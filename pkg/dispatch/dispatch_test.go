package dispatch_test

import (
	"context"
	"fmt"
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
				if n, why := b.rej.n.Load(), b.rej.last.Load(); n != 1 || why != eventgrid.RefusedSubscriptionFull {
					t.Errorf("%d requests counted as refused, the last for %v; want 1, for %s", n, why, eventgrid.RefusedSubscriptionFull)
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
	transform := func(dst []byte, _ eventgrid.Topic, sub *eventgrid.EventSubscription, ev *eventgrid.Event) []byte {
		if sub.EventDeliverySchema != eventgrid.CloudEventSchemaV1_0 {
			return ev.Body
		}
		mu.Lock()
		calls++
		mu.Unlock()
		return append(append(dst, ev.Body...), ev.Body...) // twice as long
	}
	b := newBroker(t, budget.Limits{BytesPerSubscription: 500}, transform)
	a := b.pushSub("a")
	a.EventDeliverySchema = eventgrid.CloudEventSchemaV1_0
	subs := []*eventgrid.EventSubscription{a, b.queueSub("q1"), b.queueSub("q2"), b.pushSub("plain")}
	if err := b.publish(2, 100, subs...); err != nil {
		t.Fatal(err)
	}
	// The second copy is cut from a block with some room to spare, which
	// counts whole.
	if _, bytes := b.budget.Used(); bytes < 200+400 || bytes > 200+400+50 {
		t.Errorf("budget holds %d bytes; want 600 to 650: the events, one converted copy of each and the room in the block of the second", bytes)
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

// TestPublish_ConvertedCopiesShareBlocks: after a request's first
// converted copy, the next ones are cut from one block, each where the one
// before it ends; a copy that outgrows the room left is made on its own,
// and none overwrites another.
func TestPublish_ConvertedCopiesShareBlocks(t *testing.T) {
	const n, size = 10, 100
	grown := func(ev *eventgrid.Event) int { // how much event 4 outgrows the room
		if ev.ID == "4" {
			return 20 * size // more than the block has left
		}
		return 7
	}
	transform := func(dst []byte, _ eventgrid.Topic, sub *eventgrid.EventSubscription, ev *eventgrid.Event) []byte {
		if sub.EventDeliverySchema != eventgrid.CloudEventSchemaV1_0 {
			return ev.Body
		}
		return append(append(dst, ev.Body...), strings.Repeat(ev.ID, grown(ev))...)
	}
	b := newBroker(t, budget.Limits{}, transform)
	q, plain := b.queueSub("q"), b.pushSub("plain")
	if err := b.publish(n, size, q, plain); err != nil {
		t.Fatal(err)
	}
	got, err := b.store.Receive(t.Context(), q, n, 0)
	if err != nil || len(got) != n {
		t.Fatalf("received %d events, %v; want %d", len(got), err, n)
	}
	for i, r := range got {
		id := fmt.Sprint(i)
		if body := string(r.Body); !strings.HasPrefix(body, `{"id":"`+id+`"`) || len(body) != size+len(id)*grown(&eventgrid.Event{ID: id}) ||
			strings.Trim(body[size:], id) != "" {
			t.Errorf("copy %d is %q", i, body)
		}
	}
	follows := func(a, b []byte) bool { return cap(a) > len(a) && &a[:len(a)+1][len(a)] == &b[0] }
	for _, i := range []int{1, 2, 5, 8} {
		if !follows(got[i].Body, got[i+1].Body) {
			t.Errorf("copy %d does not follow copy %d in the block", i+1, i)
		}
	}
	if !follows(got[3].Body, got[5].Body) {
		t.Error("copy 5 does not follow copy 3, before the one made on its own")
	}
	if follows(got[0].Body, got[1].Body) || follows(got[3].Body, got[4].Body) || follows(got[4].Body, got[5].Body) {
		t.Error("the first copy, or one that outgrew the room, was cut from the block")
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
