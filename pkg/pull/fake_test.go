package pull_test

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
	"github.com/edgegrid/edgegrid/pkg/pull"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// recorder counts what the store reports, and keeps the dead letters.
type recorder struct {
	mu       sync.Mutex
	received int
	settled  map[string]int
	expired  int
	dead     map[string]int
	dropped  map[string]int
	letters  []eventgrid.DeadLetter
	rejected int
}

func newRecorder() *recorder {
	return &recorder{settled: map[string]int{}, dead: map[string]int{}, dropped: map[string]int{}}
}

func (r *recorder) Received(_ *eventgrid.EventSubscription, n int) {
	r.mu.Lock()
	r.received += n
	r.mu.Unlock()
}

func (r *recorder) Settled(_ *eventgrid.EventSubscription, kind string, n int) {
	r.mu.Lock()
	r.settled[kind] += n
	r.mu.Unlock()
}

func (r *recorder) LockExpired(_ *eventgrid.EventSubscription, n int) {
	r.mu.Lock()
	r.expired += n
	r.mu.Unlock()
}

func (r *recorder) DeadLettered(_ *eventgrid.EventSubscription, reason string, n int) {
	r.mu.Lock()
	r.dead[reason] += n
	r.mu.Unlock()
}

func (r *recorder) Dropped(_ *eventgrid.EventSubscription, reason string, n int) {
	r.mu.Lock()
	r.dropped[reason] += n
	r.mu.Unlock()
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

func (r *recorder) snapshot() (dead, dropped map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneMap(r.dead), cloneMap(r.dropped)
}

func cloneMap(m map[string]int) map[string]int {
	c := make(map[string]int, len(m))
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
	store  *pull.Store
	budget *budget.Budget
	d      *dispatch.Dispatcher
	next   int
}

func newFixture(t *testing.T, o pull.Options, subs ...*eventgrid.EventSubscription) *fixture {
	t.Helper()
	return newLimitedFixture(t, o, budget.Limits{}, subs...)
}

// newLimitedFixture is newFixture with a budget of limits.
func newLimitedFixture(t *testing.T, o pull.Options, limits budget.Limits, subs ...*eventgrid.EventSubscription) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: fakeclock.New(), rec: newRecorder(), budget: budget.New(limits)}
	o.Clock, o.Metrics, o.DeadLetterer = f.clock, f.rec, f.rec
	f.store = pull.New(o, zerolog.Nop())
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

func (f *fixture) receive(sub *eventgrid.EventSubscription, max int) []pull.Received {
	f.t.Helper()
	got, err := f.store.Receive(f.t.Context(), sub, max, 0)
	if err != nil {
		f.t.Fatalf("receive: %v", err)
	}
	return got
}

func (f *fixture) counts(sub *eventgrid.EventSubscription) pull.Counts {
	f.t.Helper()
	c, ok := f.store.Counts(sub)
	if !ok {
		f.t.Fatalf("no queue for %s", sub.Name)
	}
	return c
}

func tokens(rs []pull.Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.LockToken
	}
	return out
}
