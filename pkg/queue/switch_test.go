package queue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// TestSwitch_QueueToPush: a queue subscription that holds events cannot
// become a push subscription (the dispatcher asks the store); once empty it
// can, and a receive waiting on it learns that it delivers by push now.
func TestSwitch_QueueToPush(t *testing.T) {
	q := queueSub(1, "q", 60, 10, time.Hour)
	asPush := pushSub(1, "q")
	f := newFixture(t, queue.Options{}, q)
	f.mustPublish(3, q)
	got := f.receive(q, 1)
	err := f.d.CheckSubscriptionPut(q, asPush)
	if code(err) != eventgrid.EEventsHeld || !strings.Contains(err.Error(), "holds 3 events") {
		t.Fatalf("switch with 3 events: %v; want EEventsHeld naming 3 events", err)
	}
	if err := f.d.CheckSubscriptionPut(q, queueSub(1, "q", 120, 5, time.Hour)); err != nil {
		t.Fatalf("a queue subscription's new settings: %v", err)
	}
	f.store.Acknowledge(q, append(tokens(got), tokens(f.receive(q, 2))...))
	if err := f.d.CheckSubscriptionPut(q, asPush); err != nil {
		t.Fatalf("switch of an empty queue: %v", err)
	}
	w := f.waitingReceive(q, 1, time.Minute)
	f.d.SubscriptionPut(asPush)
	a, _ := next(t, w)
	if code(a.err) != eventgrid.EBadRequest || !strings.Contains(a.err.Error(), "delivers by push") {
		t.Fatalf("the waiting receive got %v; want EBadRequest saying it delivers by push", a.err)
	}
	if f.rec.dropped[outcome.SubscriptionDeleted] != 0 {
		t.Fatalf("dropped %v", f.rec.dropped)
	}
}

func pushSub(uid uint64, name string) *eventgrid.EventSubscription {
	return &eventgrid.EventSubscription{UID: uid, Topic: topic.Name, Name: name,
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}}
}

func code(err error) string {
	if err == nil {
		return ""
	}
	return eventgrid.ErrorCode(err)
}
