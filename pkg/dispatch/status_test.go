package dispatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/resource"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// TestDispatcher_PushStatus: a push subscription's deliveryStatus while
// its endpoint holds the first request, and once it has answered; a peek
// shows where each event waits.
func TestDispatcher_PushStatus(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	p := b.pushSub("p")
	if err := b.publish(3, 100, p); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st := b.status(p); st.InFlight != 1 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	st := b.status(p)
	if st.State != resource.StateDelivering || st.Ready != 2 || st.Delivered != 0 || st.OldestQueuedTime == "" || st.LastSuccessTime != "" {
		t.Errorf("while the endpoint holds the first request: %+v", st)
	}
	if pk, ok := b.d.Peek(p, 10); !ok || pk.Total != 3 || pk.Events[0].Queue != inspect.QueueInFlight || pk.Events[1].Queue != inspect.QueueReady {
		t.Errorf("peek %+v, %v", pk, ok)
	}
	b.gate.Open()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st := b.status(p); st.State != resource.StateIdle || st.Delivered != 3 || st.LastSuccessTime == "" || st.OldestQueuedTime != "" {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}

// TestDispatcher_QueueStatus: a queue subscription is Delivering while it
// holds events and Retrying while one is delayed, until retry now makes it
// available.
func TestDispatcher_QueueStatus(t *testing.T) {
	b := newBroker(t, budget.Limits{}, nil)
	q := b.queueSub("q")
	if st := b.status(q).Queue; st.State != resource.StateIdle {
		t.Errorf("empty: %+v", st)
	}
	if err := b.publish(2, 100, q); err != nil {
		t.Fatal(err)
	}
	got, err := b.store.Receive(t.Context(), q, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Release(q, []string{got[0].LockToken}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	st := b.status(q).Queue
	if st.State != resource.StateRetrying || st.Available != 1 || st.Delayed != 1 || st.FailedAttempts != 1 || st.NextAttemptTime == "" {
		t.Errorf("with one delayed: %+v", st)
	}
	if n, _, ok := b.d.RetryNow(q); n != 1 || !ok {
		t.Errorf("RetryNow = %d, %v", n, ok)
	}
	if st := b.status(q).Queue; st.State != resource.StateDelivering || st.Available != 2 || st.NextAttemptTime != "" {
		t.Errorf("after retry now: %+v", st)
	}
}
