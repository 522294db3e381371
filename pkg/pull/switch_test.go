package pull_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/pull"
)

// TestSwitch_QueueToPush: a queue subscription that holds events cannot
// become a push subscription; once empty it can, and a receive waiting on
// it learns that it delivers by push now.
func TestSwitch_QueueToPush(t *testing.T) {
	q := queueSub(1, "q", 60, 10, time.Hour)
	asPush := pushSub(1, "q")
	f := newFixture(t, pull.Options{}, q)
	f.mustPublish(3, q)
	got := f.receive(q, 1)
	err := f.store.CheckSubscriptionPut(q, asPush)
	if code(err) != eventgrid.EEventsHeld || !strings.Contains(err.Error(), "holds 3 events") {
		t.Fatalf("switch with 3 events: %v; want EEventsHeld naming 3 events", err)
	}
	if err := f.store.CheckSubscriptionPut(q, queueSub(1, "q", 120, 5, time.Hour)); err != nil {
		t.Fatalf("a queue subscription's new settings: %v", err)
	}
	f.store.Acknowledge(q, append(tokens(got), tokens(f.receive(q, 2))...))
	if err := f.store.CheckSubscriptionPut(q, asPush); err != nil {
		t.Fatalf("switch of an empty queue: %v", err)
	}
	w := f.waitingReceive(q, 1, time.Minute)
	f.store.SubscriptionPut(asPush)
	a, _ := next(t, w)
	if code(a.err) != eventgrid.EBadRequest || !strings.Contains(a.err.Error(), "delivers by push") {
		t.Fatalf("the waiting receive got %v; want EBadRequest saying it delivers by push", a.err)
	}
	if f.rec.dropped[pull.ReasonSubscriptionDeleted] != 0 {
		t.Fatalf("dropped %v", f.rec.dropped)
	}
}

// TestSwitch_PushToQueue: a push subscription whose events the push side
// still holds cannot become a queue subscription; once they are gone it
// can, and the push side is told the subscription is gone.
func TestSwitch_PushToQueue(t *testing.T) {
	p := pushSub(1, "s")
	asQueue := queueSub(1, "s", 60, 10, time.Hour)
	push := &pushSide{held: 7}
	o := &pull.PushObserver{Next: push}
	o.SubscriptionPut(p)
	err := o.CheckSubscriptionPut(p, asQueue)
	if code(err) != eventgrid.EEventsHeld || !strings.Contains(err.Error(), "holds 7 events") {
		t.Fatalf("switch with 7 events held: %v; want EEventsHeld naming 7 events", err)
	}
	if err := o.CheckSubscriptionPut(p, pushSub(1, "s")); err != nil {
		t.Fatalf("a push subscription's new settings: %v", err)
	}
	push.held = 0
	if err := o.CheckSubscriptionPut(p, asQueue); err != nil {
		t.Fatalf("switch with nothing held: %v", err)
	}
	o.SubscriptionPut(asQueue)
	if len(push.deleted) != 1 || len(push.put) != 1 {
		t.Fatalf("the push side was told %d puts, %d deletes; want the first put and one delete", len(push.put), len(push.deleted))
	}
}
