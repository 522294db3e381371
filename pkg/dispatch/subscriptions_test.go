package dispatch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// TestSwitch_PushToQueue: a push subscription whose events the push engine
// holds cannot become a queue subscription; once they are delivered it
// can, the engine lets it go and the store takes it.
func TestSwitch_PushToQueue(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	p := b.pushSub("s")
	asQueue := *p
	asQueue.Destination = eventgrid.Destination{}
	asQueue.Queue = &eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: time.Hour}
	if err := b.publish(7, 100, p); err != nil {
		t.Fatal(err)
	}
	err := b.d.CheckSubscriptionPut(p, &asQueue)
	if code(err) != eventgrid.EEventsHeld || !strings.Contains(err.Error(), "holds 7 events") || !strings.Contains(err.Error(), "from Push to Queue") {
		t.Fatalf("switch with 7 events held: %v; want EEventsHeld naming 7 events", err)
	}
	again := *p
	if err := b.d.CheckSubscriptionPut(p, &again); err != nil {
		t.Fatalf("a push subscription's new settings: %v", err)
	}
	b.gate.Open()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := b.engine.HeldEvents(p); n != 0 {
			return fmt.Errorf("the push engine holds %d events", n)
		}
		return nil
	})
	if err := b.d.CheckSubscriptionPut(p, &asQueue); err != nil {
		t.Fatalf("switch with nothing held: %v", err)
	}
	b.d.SubscriptionPut(&asQueue)
	if sh, _ := b.engine.Share(p); sh != nil {
		t.Fatal("the push engine kept the subscription that became a queue")
	}
	if err := b.publish(2, 100, &asQueue); err != nil {
		t.Fatal(err)
	}
	if c, _ := b.store.Counts(&asQueue); c.Available != 2 {
		t.Fatalf("the queue holds %+v; want 2 available", c)
	}
	if st := b.status(&asQueue); st == nil || st.Queue == nil || st.Queue.Available != 2 {
		t.Fatalf("deliveryStatus %+v; want the queue's counts", st)
	}
}

// TestSwitch_QueueToPush: a queue subscription that holds events cannot
// become a push subscription; once they are gone it can, and the engine
// takes it.
func TestSwitch_QueueToPush(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	q := b.queueSub("s")
	asPush := *q
	asPush.Queue = nil
	asPush.Destination = eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}
	if err := b.publish(3, 100, q); err != nil {
		t.Fatal(err)
	}
	err := b.d.CheckSubscriptionPut(q, &asPush)
	if code(err) != eventgrid.EEventsHeld || !strings.Contains(err.Error(), "holds 3 events") || !strings.Contains(err.Error(), "from Queue to Push") {
		t.Fatalf("switch with 3 events held: %v; want EEventsHeld naming 3 events", err)
	}
	got, err := b.store.Receive(t.Context(), q, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for _, r := range got {
		tokens = append(tokens, r.LockToken)
	}
	if _, err := b.store.Acknowledge(q, tokens); err != nil {
		t.Fatal(err)
	}
	if err := b.d.CheckSubscriptionPut(q, &asPush); err != nil {
		t.Fatalf("switch of an empty queue: %v", err)
	}
	b.d.SubscriptionPut(&asPush)
	b.gate.Open()
	if err := b.publish(1, 100, &asPush); err != nil {
		t.Fatal(err)
	}
	// The gate counts the delivery before the request ends, and the event
	// leaves the budget once it has.
	brokertest.Eventually(t, 5*time.Second, func() error {
		b.gate.mu.Lock()
		defer b.gate.mu.Unlock()
		if b.gate.delivered["s"] != 1 {
			return fmt.Errorf("delivered %d by push; want 1", b.gate.delivered["s"])
		}
		if events, _ := b.budget.Used(); events != 0 {
			return fmt.Errorf("budget holds %d deliveries after everything was settled or delivered", events)
		}
		return nil
	})
}

// TestDeliveryStatus: a push subscription's status is its queue in the
// engine, a queue subscription's its counts in the store.
func TestDeliveryStatus(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	p, q := b.pushSub("p"), b.queueSub("q")
	if err := b.publish(2, 100, p, q); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		st := b.status(p)
		if st == nil || st.Queue != nil || st.InFlight != 1 || st.Ready != 1 {
			return fmt.Errorf("push status %+v; want 1 in flight, 1 ready", st)
		}
		return nil
	})
	if st := b.status(q); st == nil || st.Queue == nil || st.Queue.Available != 2 {
		t.Fatalf("queue status %+v; want 2 available", st)
	}
	b.d.SubscriptionDeleted(q)
	if st := b.status(q); st != nil {
		t.Fatalf("status of a deleted subscription: %+v; want none", st)
	}
	if events, _ := b.held(q); events != 0 {
		t.Fatalf("a deleted queue subscription holds %d", events)
	}
}
