package pull_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/pull"
)

// pushSide stands in for the push engine behind a Publisher and a
// PushObserver: it records what it is given, answers err to publishes, and
// holds held events of every subscription.
type pushSide struct {
	mu      sync.Mutex
	err     error
	held    int
	got     []eventgrid.Publication
	put     []*eventgrid.EventSubscription
	deleted []*eventgrid.EventSubscription
}

func (p *pushSide) Publish(_ context.Context, pub eventgrid.Publication) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, pub)
	return p.err
}

func (p *pushSide) SubscriptionPut(sub *eventgrid.EventSubscription) {
	p.mu.Lock()
	p.put = append(p.put, sub)
	p.mu.Unlock()
}

func (p *pushSide) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	p.mu.Lock()
	p.deleted = append(p.deleted, sub)
	p.mu.Unlock()
}

func (p *pushSide) HeldEvents(*eventgrid.EventSubscription) int { return p.held }

func pushSub(uid uint64, name string) *eventgrid.EventSubscription {
	return &eventgrid.EventSubscription{UID: uid, Topic: topic.Name, Name: name,
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}}
}

// publication is n events, each for subs.
func publication(f *fixture, n int, subs ...*eventgrid.EventSubscription) eventgrid.Publication {
	p := eventgrid.Publication{Topic: topic}
	for range n {
		f.next++
		body := []byte(`{"specversion":"1.0","id":"x","source":"s","type":"t"}`)
		p.Deliveries = append(p.Deliveries, eventgrid.Delivery{Event: &eventgrid.Event{Body: body, Accepted: f.clock.Now()}, Subscriptions: subs})
	}
	return p
}

func code(err error) string {
	if err == nil {
		return ""
	}
	return eventgrid.ErrorCode(err)
}

// TestPublisher_Split: queue subscriptions' events go to the store, the
// rest to the push side, without the queue subscriptions.
func TestPublisher_Split(t *testing.T) {
	q, p := queueSub(1, "q", 60, 10, time.Hour), pushSub(2, "p")
	f := newFixture(t, pull.Options{}, q)
	push := &pushSide{}
	pub := pull.Publisher{Store: f.store, Push: push}
	if err := pub.Publish(t.Context(), publication(f, 2, q, p)); err != nil {
		t.Fatal(err)
	}
	if c := f.counts(q); c.Available != 2 {
		t.Fatalf("queue counts %+v; want 2 available", c)
	}
	if len(push.got) != 1 || len(push.got[0].Deliveries) != 2 || len(push.got[0].Deliveries[0].Subscriptions) != 1 || push.got[0].Deliveries[0].Subscriptions[0] != p {
		t.Fatalf("the push side got %+v; want 2 events for the push subscription only", push.got)
	}
	if err := pub.Publish(t.Context(), publication(f, 1, q)); err != nil || len(push.got) != 1 {
		t.Fatalf("a queue-only publication: %v, push side called %d times", err, len(push.got))
	}
}

// TestPublisher_PushRefuses: when the push side refuses its part, the
// queue part is not queued, its budget is back, and its deliveries count as
// rejected beside the push side's.
func TestPublisher_PushRefuses(t *testing.T) {
	q, p := queueSub(1, "q", 60, 10, time.Hour), pushSub(2, "p")
	global := &pull.Limit{Events: 100}
	f := newFixture(t, pull.Options{Global: global}, q)
	push := &pushSide{err: eventgrid.Errorf(eventgrid.EQueueFull, "full")}
	err := pull.Publisher{Store: f.store, Push: push}.Publish(t.Context(), publication(f, 3, q, p))
	if code(err) != eventgrid.EQueueFull {
		t.Fatalf("publish: %v; want the push side's EQueueFull", err)
	}
	if c := f.counts(q); c.Available != 0 {
		t.Fatalf("queue counts %+v; want nothing queued", c)
	}
	if n, b := global.Used(); n != 0 || b != 0 {
		t.Fatalf("broker budget holds %d events, %d bytes; want none", n, b)
	}
	if f.rec.rejected != 3 {
		t.Fatalf("rejected %d queue deliveries; want 3", f.rec.rejected)
	}
}

// TestPublisher_QueueFull: a publication that does not fit a queue
// subscription's share now is refused with EQueueFull before the push side
// sees it, and counted; one that never could is refused with
// EPayloadTooLarge.
func TestPublisher_QueueFull(t *testing.T) {
	q, p := queueSub(1, "q", 60, 10, time.Hour), pushSub(2, "p")
	f := newFixture(t, pull.Options{MaxEventsPerSubscription: 2, MaxBytesPerSubscription: 1000}, q)
	push := &pushSide{}
	pub := pull.Publisher{Store: f.store, Push: push}
	if err := pub.Publish(t.Context(), publication(f, 2, q, p)); err != nil {
		t.Fatal(err)
	}
	err := pub.Publish(t.Context(), publication(f, 1, q, p))
	if code(err) != eventgrid.EQueueFull || len(push.got) != 1 || f.rec.rejected != 1 {
		t.Fatalf("publish into a full share: %v, push side called %d times, %d rejected; want EQueueFull, 1 call, 1 rejected", err, len(push.got), f.rec.rejected)
	}
	f.store.Acknowledge(q, tokens(f.receive(q, 2)))
	err = pub.Publish(t.Context(), publication(f, 3, q))
	if code(err) != eventgrid.EPayloadTooLarge || !strings.Contains(err.Error(), "broker__maxQueuedEventsPerSubscription") {
		t.Errorf("more events than the share: %v; want EPayloadTooLarge naming the key", err)
	}
	small := newFixture(t, pull.Options{MaxBytesPerSubscription: 100}, q)
	err = pull.Publisher{Store: small.store, Push: push}.Publish(t.Context(), publication(small, 2, q))
	if code(err) != eventgrid.EPayloadTooLarge || !strings.Contains(err.Error(), "broker__maxQueuedBytesPerSubscription") {
		t.Errorf("more bytes than the share: %v; want EPayloadTooLarge naming the key", err)
	}
}
