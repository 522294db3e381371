package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// Options configure a Dispatcher.
type Options struct {
	// Budget is the broker's budget, the one the modes' events count in;
	// nil means one of its own with the default limits.
	Budget *budget.Budget
	// Push is the push delivery mode (the delivery engine) and Queues the
	// queue mode (the queue store); either may be nil in a broker without
	// that mode, whose subscriptions then queue nothing.
	Push   Mode
	Queues Mode
	// Transform, if not nil, returns the body a subscription receives for
	// the event ev of topic, when it differs from the published ev.Body
	// (schema conversion), appended to dst: an empty slice whose spare
	// capacity, if any, is lent for the copy. It is called once per event
	// and delivery schema: its result may depend only on the topic, the
	// subscription's EventDeliverySchema and the event, and the
	// subscriptions of one schema share the copy. It returns ev.Body itself
	// when nothing changes. The broker's is registry.Convert, the schema
	// conversion of the publish path, which the registry's router owns.
	Transform func(dst []byte, topic eventgrid.Topic, sub *eventgrid.EventSubscription, ev *eventgrid.Event) []byte
	// Metrics, if not nil, counts the deliveries refused at publish.
	Metrics Metrics
	// PublishHold is the longest a request that does not fit the budget
	// now is held for room while what it waits for drains
	// (broker__publishHoldInMilliseconds, see budget.Budget.ReserveWithin);
	// zero refuses it at once. Clock is the delivery modes' clock; nil
	// means clock.System.
	PublishHold time.Duration
	Clock       clock.Clock
}

// Metrics receives what the dispatcher measures. Implementations must not
// block.
type Metrics interface {
	// Rejected counts a publish request the budget refused, before its
	// body was read (Admit) or after (Publish), push or queue alike, by
	// why: the broker or a subscription's share was full, or it could
	// never be held (eventgrid.Refused*).
	Rejected(reason string)
}

type nopMetrics struct{}

func (nopMetrics) Rejected(string) {}

// Mode is what the dispatcher needs of a delivery mode: the push engine
// (package push) and the queue store (package queue) implement it. A
// mode is told about its own subscriptions only, and every method is safe
// for concurrent use.
type Mode interface {
	eventgrid.SubscriptionObserver
	eventgrid.EventHolder
	// Share returns sub's share of the broker's budget, nil when the mode
	// has no queue for sub, and EUnavailable once the mode has stopped.
	Share(sub *eventgrid.EventSubscription) (*budget.Share, error)
	// Enqueue queues bodies for c.Sub, whose room is reserved under h in
	// c.Share; what it cannot queue it releases and counts as dropped.
	Enqueue(c budget.Claim, bodies [][]byte, h *budget.Hold)
	// Status, Peek, RetryNow, Pause and Purge answer the inspection API
	// and the operator's actions (docs/api.md#actions); ok is false when
	// the mode has no queue for sub. RetryNow also says how many of the
	// events it moved were at their last attempt; Pause pauses or resumes
	// sub and says since when it is paused (zero once resumed).
	Status(sub *eventgrid.EventSubscription) (st inspect.Status, ok bool)
	Peek(sub *eventgrid.EventSubscription, top int) (p inspect.Peek, ok bool)
	RetryNow(sub *eventgrid.EventSubscription) (moved, atLast int, ok bool)
	Pause(sub *eventgrid.EventSubscription, paused bool) (since time.Time, ok bool)
	Purge(sub *eventgrid.EventSubscription) (purged int, ok bool)
}

// Dispatcher splits publications between the push and queue subscriptions
// (see the package documentation). Create it with New. It implements
// eventgrid.Publisher, eventgrid.SubscriptionObserver and
// eventgrid.SubscriptionGuard, and is safe for concurrent use.
type Dispatcher struct {
	opts        Options
	push, queue Mode

	mu   sync.Mutex
	subs map[uint64]*eventgrid.EventSubscription // by UID, as last put
}

var (
	_ eventgrid.Publisher            = (*Dispatcher)(nil)
	_ eventgrid.SubscriptionObserver = (*Dispatcher)(nil)
	_ eventgrid.SubscriptionGuard    = (*Dispatcher)(nil)
)

// New returns a dispatcher over the modes of o.
func New(o Options) *Dispatcher {
	d := &Dispatcher{opts: o, push: absent{}, queue: absent{}, subs: map[uint64]*eventgrid.EventSubscription{}}
	if o.Push != nil {
		d.push = o.Push
	}
	if o.Queues != nil {
		d.queue = o.Queues
	}
	if d.opts.Budget == nil {
		d.opts.Budget = budget.New(budget.Limits{})
	}
	if d.opts.Metrics == nil {
		d.opts.Metrics = nopMetrics{}
	}
	return d
}

// wait is how a request that does not fit now waits for room.
func (d *Dispatcher) wait() budget.Wait {
	return budget.Wait{Hold: d.opts.PublishHold, Clock: d.opts.Clock}
}

// Admit tells whether a request of about bytes bytes could be held now,
// as far as the broker's own bounds tell, waiting for room as a publish
// does (see Publish) until ctx is done: nil when it could, EQueueFull when
// it could not now, EPayloadTooLarge when it never could (see
// budget.Budget.AdmitWithin); a refusal is counted. The publish path asks
// before it reads a body.
func (d *Dispatcher) Admit(ctx context.Context, bytes int64) error {
	err := d.opts.Budget.AdmitWithin(ctx, d.wait(), bytes)
	if err != nil {
		d.opts.Metrics.Rejected(eventgrid.RefusalReason(err))
	}
	return err
}

// modeOf returns the mode that serves sub.
func (d *Dispatcher) modeOf(sub *eventgrid.EventSubscription) Mode {
	if sub.IsQueue() {
		return d.queue
	}
	return d.push
}

// absent is a delivery mode the broker does not have: its subscriptions
// hold nothing, and what is published to them is released at once.
type absent struct{}

func (absent) SubscriptionPut(*eventgrid.EventSubscription)              {}
func (absent) SubscriptionDeleted(*eventgrid.EventSubscription)          {}
func (absent) HeldEvents(*eventgrid.EventSubscription) int               { return 0 }
func (absent) Share(*eventgrid.EventSubscription) (*budget.Share, error) { return nil, nil }
func (absent) Status(*eventgrid.EventSubscription) (inspect.Status, bool) {
	return inspect.Status{}, false
}
func (absent) Peek(*eventgrid.EventSubscription, int) (inspect.Peek, bool) {
	return inspect.Peek{}, false
}
func (absent) RetryNow(*eventgrid.EventSubscription) (int, int, bool) { return 0, 0, false }
func (absent) Pause(*eventgrid.EventSubscription, bool) (time.Time, bool) {
	return time.Time{}, false
}
func (absent) Purge(*eventgrid.EventSubscription) (int, bool) { return 0, false }
func (absent) Enqueue(c budget.Claim, bodies [][]byte, h *budget.Hold) {
	for _, b := range bodies {
		h.Release(c.Share, int64(len(b)))
	}
}
