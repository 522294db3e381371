package push_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// sender is the engines' sender in these tests: the shared fake, which
// records every batch it is given as a sent.
type (
	sender = mock.Sender
	sent   = mock.SendCall
)

// metrics records what the engine reports (outcome.Metrics).
type metrics struct {
	mu       sync.Mutex
	attempts map[string]int
	dropped  map[string]map[outcome.Reason]int
	firsts   map[string]int
	dead     map[string]int
}

func newMetrics() *metrics {
	return &metrics{attempts: map[string]int{}, dropped: map[string]map[outcome.Reason]int{}, firsts: map[string]int{}, dead: map[string]int{}}
}

// Record counts the event attempts begun, the first ones, and the events
// dropped and dead-lettered, by reason.
func (m *metrics) Record(r outcome.Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name := r.Sub.Name
	switch {
	case r.Kind == outcome.Started:
		m.attempts[name] += r.Events
		m.firsts[name] += len(r.FirstDelays)
	case r.Kind == outcome.GaveUp && r.DeadLettered:
		m.dead[name+"/"+string(r.Reason)]++
	case r.Kind == outcome.GaveUp, r.Kind == outcome.Discarded && r.Events > 0:
		if m.dropped[name] == nil {
			m.dropped[name] = map[outcome.Reason]int{}
		}
		n := r.Events
		if r.Kind == outcome.GaveUp {
			n = 1
		}
		m.dropped[name][r.Reason] += n
	}
}

func (m *metrics) droppedN(sub string, r outcome.Reason) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropped[sub][r]
}

// waitDropped waits until n events of the subscription named sub are
// counted as dropped for r. The worker that drops an event counts it once
// it has let go of the queue, after the event has left the queue and the
// budget: a test that sees the queue empty has yet to wait for the count.
func (m *metrics) waitDropped(t *testing.T, sub string, r outcome.Reason, n int) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if got := m.droppedN(sub, r); got != n {
			return fmt.Errorf("%d events of %s counted as dropped (%s), want %d", got, sub, r, n)
		}
		return nil
	})
}

// fastOptions are engine options with intervals short enough for tests.
func fastOptions() push.Options {
	o := push.DefaultOptions()
	o.Backoff = [2]time.Duration{50 * time.Millisecond, 150 * time.Millisecond}
	o.DeliverTimeout = 2 * time.Second
	o.LogEventExpiry = false
	o.LogDeliveryFailure = false
	return o
}

func mustEngine(tb testing.TB, o push.Options, s push.Sender, m outcome.Metrics) *push.Engine {
	tb.Helper()
	e := push.New(o, s, m, zerolog.Nop())
	tb.Cleanup(func() { _ = closeWithin(e, 5*time.Second) })
	return e
}

var nextUID atomic.Uint64

func newSub(e *push.Engine, name string, mod ...func(*eventgrid.EventSubscription)) *eventgrid.EventSubscription {
	s := &eventgrid.EventSubscription{
		UID: nextUID.Add(1), Topic: "t", Name: name, EventDeliverySchema: eventgrid.EventGridSchema,
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"},
	}
	for _, f := range mod {
		if f != nil {
			f(s)
		}
	}
	e.SubscriptionPut(s)
	return s
}

// newEvent returns an event whose body is size bytes long (at least the
// bytes its id needs).
func newEvent(id string, size int) *eventgrid.Event {
	base := fmt.Sprintf(`{"id":%q,"pad":""}`, id)
	pad := strings.Repeat("x", max(0, size-len(base)))
	return &eventgrid.Event{ID: id, Body: []byte(fmt.Sprintf(`{"id":%q,"pad":"%s"}`, id, pad)), Accepted: time.Now()}
}

func mustPublish(tb testing.TB, e *push.Engine, subs []*eventgrid.EventSubscription, events ...*eventgrid.Event) {
	tb.Helper()
	if err := publish(e, subs, events...); err != nil {
		tb.Fatalf("Publish: %v", err)
	}
}

// publish publishes events to subs through a dispatcher over e alone, as
// the broker's publish path does.
func publish(e *push.Engine, subs []*eventgrid.EventSubscription, events ...*eventgrid.Event) error {
	return publishVia(dispatch.New(dispatch.Options{Push: e, Budget: push.BudgetOf(e)}), subs, events...)
}

func publishVia(d *dispatch.Dispatcher, subs []*eventgrid.EventSubscription, events ...*eventgrid.Event) error {
	ds := make([]eventgrid.Delivery, len(events))
	for i, ev := range events {
		ds[i] = eventgrid.Delivery{Event: ev, Subscriptions: subs}
	}
	return d.Publish(context.Background(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "t"}, Deliveries: ds})
}

// limits gives o a budget of l.
func limits(o *push.Options, l budget.Limits) { o.Budget = budget.New(l) }

var errFail = errors.New("destination failed")

func zerologNop() zerolog.Logger { return zerolog.Nop() }

// idOf returns the id in an event body.
func idOf(body []byte) string {
	v, _ := rawjson.Member(body, "id")
	id, _ := rawjson.Unquote(v)
	return id
}

// closeWithin closes e, giving requests in flight d to finish.
func closeWithin(e *push.Engine, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return e.Close(ctx)
}
