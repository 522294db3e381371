package dispatch_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// stepper is a push.Sender that delivers one request per step, and
// every request once done is closed.
type stepper struct {
	steps     chan struct{}
	done      chan struct{}
	mu        sync.Mutex
	delivered int
}

func (s *stepper) Send(ctx context.Context, b *push.Batch) error {
	select {
	case <-s.steps:
	case <-s.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delivered += len(b.Bodies)
	return nil
}

func (s *stepper) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered
}

// roomBroker is a broker with shares of 5 events whose publish requests
// are held for room up to an hour, and whose push engine delivers a
// request per step.
func roomBroker(t *testing.T) (*broker, *stepper) {
	t.Helper()
	s := &stepper{steps: make(chan struct{}), done: make(chan struct{})}
	b := newBrokerWith(t, budget.Limits{EventsPerSubscription: 5}, s, dispatch.Options{PublishHold: time.Hour})
	t.Cleanup(func() { close(s.done) }) // before the engine closes: nothing hangs
	return b, s
}

// deliverOne lets one push request through and waits until it is done.
func deliverOne(t *testing.T, s *stepper) {
	t.Helper()
	before := s.count()
	s.steps <- struct{}{}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if s.count() == before {
			return fmt.Errorf("the push request not delivered")
		}
		return nil
	})
}

// ackOne acknowledges one of tokens of the queue subscription q.
func ackOne(t *testing.T, b *broker, q *eventgrid.EventSubscription, tokens *[]string) {
	t.Helper()
	res, err := b.store.Acknowledge(q, (*tokens)[:1])
	if err != nil || len(res.Succeeded) != 1 {
		t.Fatalf("acknowledge: %+v, %v", res, err)
	}
	*tokens = (*tokens)[1:]
}

// fillQueue publishes 5 events to q, receives them and acknowledges one,
// then publishes one more: q's share is full, and its consumer is taking
// deliveries. It returns the lock tokens not acknowledged.
func fillQueue(t *testing.T, b *broker, q *eventgrid.EventSubscription) []string {
	t.Helper()
	if err := b.publish(5, 100, q); err != nil {
		t.Fatal(err)
	}
	got, err := b.store.Receive(context.Background(), q, 5, 0)
	if err != nil || len(got) != 5 {
		t.Fatalf("receive: %d events, %v", len(got), err)
	}
	var tokens []string
	for _, r := range got {
		tokens = append(tokens, r.LockToken)
	}
	ackOne(t, b, q, &tokens)
	if err := b.publish(1, 100, q); err != nil {
		t.Fatal(err)
	}
	return tokens
}

// fillPush has p deliver one event, then queues 5 more, which wait for
// steps: p's share is full, and its endpoint is taking deliveries.
func fillPush(t *testing.T, b *broker, s *stepper, p *eventgrid.EventSubscription) {
	t.Helper()
	if err := b.publish(1, 100, p); err != nil {
		t.Fatal(err)
	}
	deliverOne(t, s)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := b.engine.HeldEvents(p); n != 0 {
			return fmt.Errorf("p holds %d events after its delivery", n)
		}
		return nil
	})
	if err := b.publish(5, 100, p); err != nil {
		t.Fatal(err)
	}
}

// publishHeld publishes one event for subs in the background and waits
// until the request is held for room.
func publishHeld(t *testing.T, b *broker, subs ...*eventgrid.EventSubscription) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- b.publish(1, 100, subs...) }()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if w := b.budget.Waiting(); w != 1 {
			return fmt.Errorf("%d requests held for room; want 1", w)
		}
		return nil
	})
	return done
}

// answer returns what a publish answered; it fails the test if the
// publish is still held after a while, which only a broken hold does.
func answer(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the publish is still held for room")
		return nil
	}
}

// TestPublish_HeldForRoom: a request that does not fit a subscription's
// share is held while that subscription takes deliveries, whatever its
// mode, and accepted once one makes room: a queue subscription's room is
// made by acknowledgements, a push subscription's by deliveries.
func TestPublish_HeldForRoom(t *testing.T) {
	t.Run("Queue", func(t *testing.T) {
		b, _ := roomBroker(t)
		q := b.queueSub("q")
		tokens := fillQueue(t, b, q)
		done := publishHeld(t, b, q)
		ackOne(t, b, q, &tokens)
		if err := answer(t, done); err != nil {
			t.Fatalf("held publish: %v; want it accepted once an acknowledgement made room", err)
		}
		if n := b.store.HeldEvents(q); n != 5 {
			t.Errorf("q holds %d events; want 5", n)
		}
		if n := b.rej.n.Load(); n != 0 {
			t.Errorf("%d requests counted as refused; want none", n)
		}
	})
	t.Run("Push", func(t *testing.T) {
		b, s := roomBroker(t)
		p := b.pushSub("p")
		fillPush(t, b, s, p)
		done := publishHeld(t, b, p)
		deliverOne(t, s)
		if err := answer(t, done); err != nil {
			t.Fatalf("held publish: %v; want it accepted once a delivery made room", err)
		}
	})
	t.Run("Both", func(t *testing.T) {
		b, _ := roomBroker(t)
		p, q := b.pushSub("p"), b.queueSub("q")
		tokens := fillQueue(t, b, q)
		done := publishHeld(t, b, p, q)
		ackOne(t, b, q, &tokens)
		if err := answer(t, done); err != nil {
			t.Fatalf("held publish: %v; want it accepted once the queue's acknowledgement made room", err)
		}
		if n := b.engine.HeldEvents(p); n != 1 {
			t.Errorf("p holds %d events; want the held request's 1", n)
		}
	})
}

// TestPublish_NotHeldBehindIdleSubscribers: a subscription that takes no
// deliveries makes no room, so a request waiting for it is refused at
// once, however long the hold: a queue whose events are received but never
// acknowledged, a push endpoint that never answered, or either of them
// beside a subscription that is draining.
func TestPublish_NotHeldBehindIdleSubscribers(t *testing.T) {
	refused := func(t *testing.T, b *broker, subs ...*eventgrid.EventSubscription) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- b.publish(1, 100, subs...) }()
		if err := answer(t, done); code(err) != eventgrid.EQueueFull {
			t.Fatalf("publish behind an idle subscriber: %v; want EQueueFull at once", err)
		}
	}
	t.Run("QueueNotAcknowledged", func(t *testing.T) {
		b, _ := roomBroker(t)
		q := b.queueSub("q")
		if err := b.publish(5, 100, q); err != nil {
			t.Fatal(err)
		}
		if got, err := b.store.Receive(context.Background(), q, 5, 0); err != nil || len(got) != 5 {
			t.Fatalf("receive: %d events, %v", len(got), err)
		}
		refused(t, b, q)
	})
	t.Run("PushNeverAnswered", func(t *testing.T) {
		b, _ := roomBroker(t)
		p := b.pushSub("p")
		if err := b.publish(5, 100, p); err != nil {
			t.Fatal(err)
		}
		refused(t, b, p)
	})
	t.Run("BesideADrainingOne", func(t *testing.T) {
		b, _ := roomBroker(t)
		p, q := b.pushSub("p"), b.queueSub("q")
		fillQueue(t, b, q)
		if err := b.publish(5, 100, p); err != nil {
			t.Fatal(err)
		}
		refused(t, b, p, q)
	})
}
