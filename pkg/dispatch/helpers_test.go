package dispatch_test

import (
	"context"
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
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/resource"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// gate is a push.Sender that holds every request until it is opened,
// then delivers; it counts the events delivered per subscription.
type gate struct {
	once      sync.Once
	opened    chan struct{}
	mu        sync.Mutex
	delivered map[string]int
}

func newGate() *gate { return &gate{opened: make(chan struct{}), delivered: map[string]int{}} }

func (g *gate) Open() { g.once.Do(func() { close(g.opened) }) }

func (g *gate) Send(ctx context.Context, b *push.Batch) error {
	select {
	case <-g.opened:
	case <-ctx.Done():
		return ctx.Err()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.delivered[b.Subscription.Name] += len(b.Bodies)
	return nil
}

// Both delivery modes are modes of the dispatcher.
var (
	_ dispatch.Mode = (*push.Engine)(nil)
	_ dispatch.Mode = (*queue.Store)(nil)
)

// broker is a dispatcher over a real push engine and a real queue store
// sharing one budget.
type broker struct {
	d      *dispatch.Dispatcher
	engine *push.Engine
	store  *queue.Store
	budget *budget.Budget
	gate   *gate
	rej    *rejections
	board  *inspect.Board
	clock  *fakeclock.Clock
}

// rejections counts the requests the dispatcher refuses, and keeps the
// reason of the last one.
type rejections struct {
	n    atomic.Int64
	last atomic.Value // string
}

func (r *rejections) Rejected(reason string) {
	r.n.Add(1)
	r.last.Store(reason)
}

func newBroker(t *testing.T, l budget.Limits, transform func([]byte, eventgrid.Topic, *eventgrid.EventSubscription, *eventgrid.Event) []byte) *broker {
	t.Helper()
	g := newGate()
	b := newBrokerWith(t, l, g, dispatch.Options{Transform: transform})
	b.gate = g
	t.Cleanup(g.Open) // before the engine closes: nothing hangs
	return b
}

// newBrokerWith is a broker whose push engine delivers through sender,
// with the dispatcher options o (their budget, modes, board and metrics
// set here).
//
// Its modes share a clock that stands still. The senders hold requests for
// as long as a test takes; on the system clock, when the machine is slow,
// the push engine's watchdog would find them stalled after 10 ms and send
// the next ones beside them.
func newBrokerWith(t *testing.T, l budget.Limits, sender push.Sender, o dispatch.Options) *broker {
	t.Helper()
	clock := fakeclock.New()
	b := &broker{budget: budget.New(l), rej: &rejections{}, board: inspect.New(inspect.Options{Clock: clock}), clock: clock}
	eo := push.DefaultOptions()
	eo.Budget, eo.Board, eo.Clock = b.budget, b.board, clock
	eo.LogDeliveryFailure, eo.LogEventExpiry = false, false
	b.engine = push.New(eo, sender, nil, zerolog.Nop())
	t.Cleanup(func() { _ = b.engine.Close(context.Background()) })
	b.store = queue.New(queue.Options{Board: b.board, Clock: clock}, zerolog.Nop())
	t.Cleanup(func() { _ = b.store.Close(context.Background()) })
	o.Budget, o.Push, o.Queues, o.Metrics, o.Clock = b.budget, b.engine, b.store, b.rej, clock
	b.d = dispatch.New(o)
	return b
}

var nextUID atomic.Uint64

func (b *broker) pushSub(name string) *eventgrid.EventSubscription {
	s := &eventgrid.EventSubscription{UID: nextUID.Add(1), Topic: "t", Name: name, EventDeliverySchema: eventgrid.EventGridSchema,
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}}
	b.d.SubscriptionPut(s)
	return s
}

func (b *broker) queueSub(name string) *eventgrid.EventSubscription {
	s := &eventgrid.EventSubscription{UID: nextUID.Add(1), Topic: "t", Name: name, EventDeliverySchema: eventgrid.CloudEventSchemaV1_0,
		Queue: &eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: time.Hour}}
	b.d.SubscriptionPut(s)
	return s
}

// publish publishes n events of size bytes, each for subs, as one request.
func (b *broker) publish(n, size int, subs ...*eventgrid.EventSubscription) error {
	ds := make([]eventgrid.Delivery, n)
	for i := range ds {
		body := fmt.Sprintf(`{"id":"%d","pad":"`, i)
		body += strings.Repeat("x", max(0, size-len(body)-2)) + `"}`
		ds[i] = eventgrid.Delivery{Event: &eventgrid.Event{ID: fmt.Sprint(i), Body: []byte(body), Accepted: b.clock.Now()}, Subscriptions: subs}
	}
	return b.d.Publish(context.Background(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "t"}, Deliveries: ds})
}

// status is sub's deliveryStatus as the API shows it: what its mode holds,
// with its totals on the board; nil when its mode has no queue for it.
func (b *broker) status(sub *eventgrid.EventSubscription) *resource.DeliveryStatus {
	st, ok := b.d.Status(sub)
	if !ok {
		return nil
	}
	return resource.NewDeliveryStatus(sub.IsQueue(), st, b.board.Subscription(sub.UID).Totals())
}

// held returns what sub holds in the budget.
func (b *broker) held(sub *eventgrid.EventSubscription) (events, bytes int64) {
	for _, h := range b.d.Holdings().Subscriptions {
		if h.Subscription.UID == sub.UID {
			return h.Events, h.Bytes
		}
	}
	return 0, 0
}

func code(err error) string {
	if err == nil {
		return ""
	}
	return eventgrid.ErrorCode(err)
}
