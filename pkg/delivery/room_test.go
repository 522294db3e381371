package delivery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/delivery"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// roomEngine is an engine whose one subscription has a share of four
// events and has delivered three, one after the other, so that it may
// send four at once; its next requests wait for the gate.
func roomEngine(t *testing.T, hold time.Duration) (*delivery.Engine, *gateSender, *eventgrid.EventSubscription) {
	t.Helper()
	o := fastOptions()
	o.MaxQueuedEventsPerSubscription = 4
	o.PublishHold = hold
	s := newGateSender()
	e := mustEngine(t, o, s, nil)
	t.Cleanup(func() { close(s.end) })
	sub := newSub(e, "s")
	for i := range 3 {
		id := fmt.Sprint("warm", i)
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(id, 50))
		brokertest.Eventually(t, 5*time.Second, func() error {
			if st, _ := e.QueueStats(sub); s.got(id) != 1 || st.InFlight != 0 {
				return fmt.Errorf("not warm yet")
			}
			return nil
		})
	}
	s.hold(nil)
	for i := range 4 {
		mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent(fmt.Sprint("e", i), 50))
	}
	return e, s, sub
}

// TestRoom_HeldUntilDelivered: a publish request that does not fit the
// share of a subscription that is delivering waits for room, and is
// accepted once deliveries have made it.
func TestRoom_HeldUntilDelivered(t *testing.T) {
	e, s, sub := roomEngine(t, time.Hour)
	done := make(chan error, 1)
	go func() { done <- publish(e, []*eventgrid.EventSubscription{sub}, newEvent("late", 50)) }()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := e.QueueStats(sub); st.InFlight != 4 {
			return fmt.Errorf("%d of the 4 queued events in flight", st.InFlight)
		}
		return nil
	})
	select {
	case err := <-done:
		t.Fatalf("publish returned %v while the share was full, before any room was made", err)
	default:
	}
	s.open()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("held publish: %v, want it accepted once the deliveries made room", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held publish was not accepted after the deliveries made room")
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if s.got("late") != 1 {
			return fmt.Errorf("the held event not delivered")
		}
		return nil
	})
}

// TestRoom_NotHeldBehindADeadSubscriber: a subscription that has never
// delivered frees nothing, so a request that does not fit its share is
// refused at once, however long the hold allowed.
func TestRoom_NotHeldBehindADeadSubscriber(t *testing.T) {
	o := fastOptions()
	o.MaxQueuedEventsPerSubscription = 2
	o.PublishHold = time.Hour
	o.Backoff = [2]time.Duration{time.Hour, time.Hour}
	e := mustEngine(t, o, &sender{SendFn: func(context.Context, *delivery.Batch) error { return errFail }}, nil)
	sub := newSub(e, "dead")
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("1", 50), newEvent("2", 50))
	if err := publish(e, []*eventgrid.EventSubscription{sub}, newEvent("3", 50)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		t.Fatalf("publish behind a dead subscriber: %v, want QueueFull", err)
	}
}

// TestRoom_HoldEnds: a request held behind a subscription that stops
// delivering is refused once the hold has passed, or at once when its
// context ends.
func TestRoom_HoldEnds(t *testing.T) {
	t.Run("Hold", func(t *testing.T) {
		e, _, sub := roomEngine(t, 100*time.Millisecond)
		if err := publish(e, []*eventgrid.EventSubscription{sub}, newEvent("late", 50)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
			t.Fatalf("publish after the hold: %v, want QueueFull", err)
		}
	})
	t.Run("Context", func(t *testing.T) {
		e, _, sub := roomEngine(t, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- e.Publish(ctx, eventgrid.Publication{Topic: eventgrid.Topic{Name: "t"},
				Deliveries: []eventgrid.Delivery{{Event: newEvent("late", 50), Subscriptions: []*eventgrid.EventSubscription{sub}}}})
		}()
		cancel()
		if err := <-done; eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
			t.Fatalf("publish whose client went away: %v, want QueueFull", err)
		}
	})
	t.Run("Admit", func(t *testing.T) {
		o := fastOptions()
		o.MaxQueuedEvents = 1
		o.PublishHold = time.Hour
		o.Backoff = [2]time.Duration{time.Hour, time.Hour}
		e := mustEngine(t, o, &sender{SendFn: func(context.Context, *delivery.Batch) error { return errFail }}, nil)
		if !e.AdmitWait(context.Background(), 10) {
			t.Fatal("an empty broker did not admit a request")
		}
		mustPublish(t, e, []*eventgrid.EventSubscription{newSub(e, "s")}, newEvent("1", 50))
		if e.AdmitWait(context.Background(), 10) {
			t.Error("a full broker that delivers nothing admitted a request")
		}
	})
}
