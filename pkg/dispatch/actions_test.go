package dispatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// TestDispatcher_Redrive: redriven events go to the one subscription
// named, as newly accepted (no attempt yet, accepted now), within the
// budget as a publish is: 413 when they could never fit, 503 when they do
// not fit now, and then nothing is queued.
func TestDispatcher_Redrive(t *testing.T) {
	b := newBroker(t, budget.Limits{Events: 100, EventsPerSubscription: 3}, nil)
	q, other := b.queueSub("q"), b.queueSub("other")
	bodies := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(fmt.Sprintf(`{"id":"r%d"}`, i))
		}
		return out
	}
	b.clock.Advance(time.Minute)
	if err := b.d.Redrive(t.Context(), q, bodies(2)); err != nil {
		t.Fatal(err)
	}
	p, _ := b.d.Peek(q, 10)
	if p.Total != 2 || p.Events[0].Attempts != 0 || !p.Events[0].Enqueued.Equal(b.clock.Now()) {
		t.Errorf("redriven: %+v", p)
	}
	if n := b.d.HeldEvents(other); n != 0 {
		t.Errorf("the topic's other subscription got %d events", n)
	}
	if err := b.d.Redrive(t.Context(), q, bodies(4)); code(err) != eventgrid.EPayloadTooLarge {
		t.Errorf("4 events for a share of 3: %v, want PayloadTooLarge", err)
	}
	if err := b.d.Redrive(t.Context(), q, bodies(2)); code(err) != eventgrid.EQueueFull {
		t.Errorf("2 more for a share holding 2 of 3: %v, want QueueFull", err)
	}
	if events, _ := b.held(q); events != 2 {
		t.Errorf("%d held after the refusals, want 2", events)
	}
}

// TestDispatcher_QueueNoReceiver: a queue subscription with events
// available and nobody receiving them reads NoReceiver, not Delivering;
// Paused once paused.
func TestDispatcher_QueueNoReceiver(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	q := b.queueSub("q")
	if err := b.publish(2, 100, q); err != nil {
		t.Fatal(err)
	}
	if st := b.status(q).Queue; st.State != resource.StateNoReceiver || st.ReceiversWaiting != 0 || st.LastReceiveTime != "" {
		t.Errorf("never received: %+v", st)
	}
	got, err := b.store.Receive(t.Context(), q, 1, 0)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if st := b.status(q).Queue; st.State != resource.StateDelivering || st.LastReceiveTime == "" {
		t.Errorf("one locked: %+v", st)
	}
	if _, err := b.store.Acknowledge(q, []string{got[0].LockToken}); err != nil {
		t.Fatal(err)
	}
	if st := b.status(q).Queue; st.State != resource.StateDelivering {
		t.Errorf("just received: %+v", st)
	}
	b.clock.Advance(resource.NoReceiverAfter)
	if st := b.status(q).Queue; st.State != resource.StateNoReceiver {
		t.Errorf("no receive for %v: %+v", resource.NoReceiverAfter, st)
	}
	b.d.Pause(q, true)
	if st := b.status(q).Queue; st.State != resource.StatePaused || st.PausedSince == "" {
		t.Errorf("paused: %+v", st)
	}
}

// TestDispatcher_PauseFollowsModeChange: a subscription paused over the
// API stays paused when it moves from push to queue delivery.
func TestDispatcher_PauseFollowsModeChange(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	p := b.pushSub("p")
	b.d.Pause(p, true)
	q := *p
	q.Destination = eventgrid.Destination{}
	q.EventDeliverySchema = eventgrid.CloudEventSchemaV1_0
	q.Queue = &eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: time.Hour}
	b.d.SubscriptionPut(&q)
	if st := b.status(&q).Queue; st.State != resource.StatePaused {
		t.Errorf("after the move to queue delivery: %+v", st)
	}
}
