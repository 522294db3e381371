package registry

import (
	"context"
	"sync"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Router is the registry's side of the publish path: it names the topic a
// request publishes to, matches the request's events against the topic's
// subscriptions, and hands what matched to the next publisher (the
// broker's dispatcher). It is safe for concurrent use.
type Router struct {
	reg  *Registry
	next eventgrid.Publisher
}

// NewRouter returns a router over reg's topics that hands matched events to
// next.
func NewRouter(reg *Registry, next eventgrid.Publisher) *Router {
	return &Router{reg: reg, next: next}
}

// Topic returns the topic name publishes to and whether it has
// subscriptions, or ETopicNotFound.
func (r *Router) Topic(name string) (topic eventgrid.Topic, subscribed bool, err error) {
	topic, routes, err := r.reg.Routes(name)
	return topic, len(routes) > 0, err
}

// deliveriesPool holds the slices one request's matches are made in; the
// next publisher keeps none of them.
var deliveriesPool = sync.Pool{New: func() any { return new([]eventgrid.Delivery) }}

// Publish matches events against the subscriptions topic has now and hands
// the matches to the next publisher, as one publication counting the bytes
// of every event (matched or not: they were allocated together). It
// returns how many events matched no subscription, and the next
// publisher's error (nothing is queued then), or ETopicNotFound if the
// topic was deleted meanwhile. The events' bodies may be kept; the Event
// structs and the slice may not.
func (r *Router) Publish(ctx context.Context, topic eventgrid.Topic, events []*eventgrid.Event) (unmatched int, err error) {
	_, routes, err := r.reg.Routes(topic.Name)
	if err != nil {
		return 0, err
	}
	ds := deliveriesPool.Get().(*[]eventgrid.Delivery)
	defer func() {
		clear(*ds)
		*ds = (*ds)[:0]
		deliveriesPool.Put(ds)
	}()
	*ds = Match((*ds)[:0], events, routes)
	if len(*ds) == 0 {
		return len(events), nil
	}
	var size int64
	for _, ev := range events {
		size += int64(len(ev.Body))
	}
	if err := r.next.Publish(ctx, eventgrid.Publication{Topic: topic, Deliveries: *ds, Size: size}); err != nil {
		return 0, err
	}
	return len(events) - len(*ds), nil
}
