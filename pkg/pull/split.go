package pull

import (
	"context"
	"sync"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Publisher hands a publication's queue-subscription events to the store
// and the rest to Push, all or nothing: the queue events' budget is
// reserved first, and they are queued only once Push has accepted its
// part.
type Publisher struct {
	Store *Store
	Push  eventgrid.Publisher
}

var _ eventgrid.Publisher = Publisher{}

// Publish implements eventgrid.Publisher.
func (p Publisher) Publish(ctx context.Context, pub eventgrid.Publication) error {
	queued, pushed := 0, 0
	for _, d := range pub.Deliveries {
		for _, sub := range d.Subscriptions {
			if sub.IsQueue() {
				queued++
			} else {
				pushed++
			}
		}
	}
	if queued == 0 {
		return p.Push.Publish(ctx, pub)
	}
	b, err := p.Store.Prepare(pub.Topic, pub.Deliveries)
	if err != nil {
		p.rejected(queued, err)
		return err
	}
	if pushed > 0 {
		push := pub
		push.Deliveries = pushOnly(pub.Deliveries)
		if err := p.Push.Publish(ctx, push); err != nil {
			b.Abort()
			p.rejected(queued, err) // Push counted its own deliveries
			return err
		}
	}
	b.Commit()
	return nil
}

// rejected counts the n queue deliveries of a publication refused because
// the broker or a subscription was full, or could never hold it.
func (p Publisher) rejected(n int, err error) {
	switch eventgrid.ErrorCode(err) {
	case eventgrid.EQueueFull, eventgrid.EPayloadTooLarge:
		p.Store.opts.Metrics.Rejected(n)
	}
}

// pushOnly returns deliveries without their queue subscriptions, leaving
// out the events that go to none.
func pushOnly(ds []eventgrid.Delivery) []eventgrid.Delivery {
	out := make([]eventgrid.Delivery, 0, len(ds))
	for _, d := range ds {
		subs := make([]*eventgrid.EventSubscription, 0, len(d.Subscriptions))
		for _, s := range d.Subscriptions {
			if !s.IsQueue() {
				subs = append(subs, s)
			}
		}
		if len(subs) > 0 {
			out = append(out, eventgrid.Delivery{Event: d.Event, Subscriptions: subs})
		}
	}
	return out
}

// PushObserver passes on to Next the changes of push subscriptions only, so
// that a push delivery engine never sees a queue subscription. A push
// subscription that becomes a queue subscription is reported deleted, and
// one that becomes a push subscription again is reported put. As a
// eventgrid.SubscriptionGuard it refuses to make a push subscription that
// Next holds events of (an eventgrid.EventHolder) a queue subscription.
type PushObserver struct {
	Next eventgrid.SubscriptionObserver

	mu     sync.Mutex
	queues map[uint64]bool // UIDs of the queue subscriptions
}

var (
	_ eventgrid.SubscriptionObserver = (*PushObserver)(nil)
	_ eventgrid.SubscriptionGuard    = (*PushObserver)(nil)
)

// CheckSubscriptionPut implements eventgrid.SubscriptionGuard.
func (o *PushObserver) CheckSubscriptionPut(old, sub *eventgrid.EventSubscription) error {
	if old.IsQueue() || !sub.IsQueue() {
		return nil
	}
	h, ok := o.Next.(eventgrid.EventHolder)
	if !ok {
		return nil
	}
	if n := h.HeldEvents(old); n > 0 {
		return eventgrid.Errorf(eventgrid.EEventsHeld, "Event subscription %q of topic %q holds %d events for delivery to its destination (queued, waiting to be retried or in flight); changing its deliveryMode from Push to Queue would drop them. Wait until its deliveryStatus shows none, or delete the subscription to drop them.", old.Name, old.Topic, n)
	}
	return nil
}

// SubscriptionPut implements eventgrid.SubscriptionObserver.
func (o *PushObserver) SubscriptionPut(sub *eventgrid.EventSubscription) {
	o.mu.Lock()
	if o.queues == nil {
		o.queues = map[uint64]bool{}
	}
	wasQueue, seen := o.queues[sub.UID]
	o.queues[sub.UID] = sub.IsQueue()
	o.mu.Unlock()
	switch {
	case !sub.IsQueue():
		o.Next.SubscriptionPut(sub)
	case seen && !wasQueue:
		o.Next.SubscriptionDeleted(sub)
	}
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver.
func (o *PushObserver) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	o.mu.Lock()
	isQueue := o.queues[sub.UID]
	delete(o.queues, sub.UID)
	o.mu.Unlock()
	if !isQueue {
		o.Next.SubscriptionDeleted(sub)
	}
}
