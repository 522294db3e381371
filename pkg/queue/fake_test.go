package queue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// recorder counts what the store reports (outcome.Metrics), and keeps the
// dead letters.
type recorder struct {
	mu       sync.Mutex
	received int
	settled  map[string]int
	expired  int
	dead     map[outcome.Reason]int
	dropped  map[outcome.Reason]int
	letters  []eventgrid.DeadLetter
	rejected int
}

func newRecorder() *recorder {
	return &recorder{settled: map[string]int{}, dead: map[outcome.Reason]int{}, dropped: map[outcome.Reason]int{}}
}

// Record counts the events received, the tokens settled by kind, the
// locks expired and the events dead-lettered and dropped by reason.
func (r *recorder) Record(rec outcome.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch rec.Kind {
	case outcome.Started:
		r.received += rec.Events
	case outcome.Settled:
		r.settled[rec.Settlement] += rec.Events
	case outcome.Attempted:
		r.expired += rec.Expired
	case outcome.GaveUp:
		if rec.DeadLettered {
			r.dead[rec.Reason]++
		} else {
			r.dropped[rec.Reason]++
		}
	case outcome.Discarded:
		r.dropped[rec.Reason] += rec.Events
	}
}

func (r *recorder) Rejected(string) {
	r.mu.Lock()
	r.rejected++
	r.mu.Unlock()
}

func (r *recorder) DeadLetter(l eventgrid.DeadLetter) {
	r.mu.Lock()
	r.letters = append(r.letters, l)
	r.mu.Unlock()
	l.Done()
}

func (r *recorder) snapshot() (dead, dropped map[outcome.Reason]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneMap(r.dead), cloneMap(r.dropped)
}

func cloneMap[K comparable](m map[K]int) map[K]int {
	c := make(map[K]int, len(m))
	for k, v := range m {
		if v != 0 {
			c[k] = v
		}
	}
	return c
}

var topic = eventgrid.Topic{Name: "orders", InputSchema: eventgrid.CloudEventSchemaV1_0}

func queueSub(uid uint64, name string, lock, maxCount int, ttl time.Duration) *eventgrid.EventSubscription {
	return &eventgrid.EventSubscription{
		UID: uid, Topic: topic.Name, Name: name,
		EventDeliverySchema: eventgrid.CloudEventSchemaV1_0,
		Queue:               &eventgrid.QueueConfig{ReceiveLockSeconds: lock, MaxDeliveryCount: maxCount, EventTimeToLive: ttl},
	}
}

// fixture is a store on a fake clock, published to through the broker's
// dispatcher, within a budget.
type fixture struct {
	t      *testing.T
	clock  *fakeclock.Clock
	rec    *recorder
	store  *queue.Store
	budget *budget.Budget
	d      *dispatch.Dispatcher
	next   int
}

func newFixture(t *testing.T, o queue.Options, subs ...*eventgrid.EventSubscription) *fixture {
	t.Helper()
	return newLimitedFixture(t, o, budget.Limits{}, subs...)
}

// newLimitedFixture is newFixture with a budget of limits.
func newLimitedFixture(t *testing.T, o queue.Options, limits budget.Limits, subs ...*eventgrid.EventSubscription) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: fakeclock.New(), rec: newRecorder(), budget: budget.New(limits)}
	o.Clock, o.Metrics, o.DeadLetterer = f.clock, f.rec, f.rec
	f.store = queue.New(o, zerolog.Nop())
	f.d = dispatch.New(dispatch.Options{Budget: f.budget, Queues: f.store, Metrics: f.rec})
	for _, s := range subs {
		f.d.SubscriptionPut(s)
	}
	t.Cleanup(func() { _ = f.store.Close(context.Background()) })
	return f
}

// publish queues n events for subs and returns their bodies.
func (f *fixture) publish(n int, subs ...*eventgrid.EventSubscription) ([]string, error) {
	var ds []eventgrid.Delivery
	var bodies []string
	for range n {
		f.next++
		body := fmt.Sprintf(`{"specversion":"1.0","id":"%d","source":"s","type":"t"}`, f.next)
		bodies = append(bodies, body)
		ds = append(ds, eventgrid.Delivery{Event: &eventgrid.Event{ID: fmt.Sprint(f.next), Body: []byte(body), Accepted: f.clock.Now()}, Subscriptions: subs})
	}
	if err := f.d.Publish(f.t.Context(), eventgrid.Publication{Topic: topic, Deliveries: ds}); err != nil {
		return nil, err
	}
	return bodies, nil
}

func (f *fixture) mustPublish(n int, subs ...*eventgrid.EventSubscription) []string {
	f.t.Helper()
	bodies, err := f.publish(n, subs...)
	if err != nil {
		f.t.Fatalf("publish: %v", err)
	}
	return bodies
}

func (f *fixture) receive(sub *eventgrid.EventSubscription, max int) []queue.Received {
	f.t.Helper()
	got, err := f.store.Receive(f.t.Context(), sub, max, 0)
	if err != nil {
		f.t.Fatalf("receive: %v", err)
	}
	return got
}

func (f *fixture) counts(sub *eventgrid.EventSubscription) queue.Counts {
	f.t.Helper()
	c, ok := f.store.Counts(sub)
	if !ok {
		f.t.Fatalf("no queue for %s", sub.Name)
	}
	return c
}

func tokens(rs []queue.Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.LockToken
	}
	return out
}
