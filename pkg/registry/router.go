package registry

import (
	"context"
	"sync"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// Router is the registry's side of the publish path: it names the topic a
// request publishes to, matches the request's events against the topic's
// subscriptions, and hands what matched to the next publisher (the
// broker's dispatcher). It owns the publish path's schema conversion: it
// tells the decoder when events may be built as their CloudEvents (Topic),
// restores them when the subscriptions changed since (Publish), and
// Convert is the conversion the dispatcher makes for each delivery schema.
// It is safe for concurrent use.
type Router struct {
	reg  *Registry
	next eventgrid.Publisher
}

// NewRouter returns a router over reg's topics that hands matched events to
// next.
func NewRouter(reg *Registry, next eventgrid.Publisher) *Router {
	return &Router{reg: reg, next: next}
}

// Topic returns the topic name publishes to and what its subscriptions
// ask of the publish path, or ETopicNotFound.
func (r *Router) Topic(name string) (eventgrid.Topic, eventgrid.Subscribers, error) {
	topic, routes, err := r.reg.Routes(name)
	return topic, eventgrid.Subscribers{Any: len(routes) > 0, CloudEventsOnly: cloudEventsOnly(topic, routes)}, err
}

// cloudEventsOnly reports whether every one of routes, the subscriptions of
// topic, takes the topic's events converted to CloudEvents, with a filter
// that reads no more of an event than its Event fields: then the events
// can be built as their CloudEvents.
func cloudEventsOnly(topic eventgrid.Topic, routes []Route) bool {
	for _, rt := range routes {
		if !schema.Converts(topic.InputSchema, rt.Subscription.EventDeliverySchema) || rt.Matcher.ReadsBody() {
			return false
		}
	}
	return len(routes) > 0
}

// deliveriesPool holds the slices one request's matches are made in; the
// next publisher keeps none of them.
var deliveriesPool = sync.Pool{New: func() any { return new([]eventgrid.Delivery) }}

// Publish matches events against the subscriptions topic has now and hands
// the matches to the next publisher, as one publication counting the bytes
// of every event (matched or not: they were allocated together). It
// returns how many events matched no subscription, and the next
// publisher's error (nothing is queued then), or ETopicNotFound if the
// topic was deleted meanwhile. Events built as their CloudEvents
// (eventgrid.Event.Converted) while a subscription now needs them as
// published, which Topic did not foresee, are restored to their bodies as
// published (schema.RestoreEventGrid) before they are matched. The events'
// bodies may be kept; the Event structs and the slice may not.
func (r *Router) Publish(ctx context.Context, topic eventgrid.Topic, events []*eventgrid.Event) (unmatched int, err error) {
	now, routes, err := r.reg.Routes(topic.Name)
	if err != nil {
		return 0, err
	}
	if !cloudEventsOnly(now, routes) {
		if err := restore(events); err != nil {
			return 0, err
		}
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

// restore gives the events built as their CloudEvents back their bodies as
// published. It fails only for a Converted event the decoder did not build,
// which is a fault of the broker's own.
func restore(events []*eventgrid.Event) error {
	for _, ev := range events {
		if err := schema.RestoreEventGrid(ev); err != nil {
			return eventgrid.Errorf(eventgrid.EInternal, "event %q was built as its CloudEvent and cannot be restored: %v", ev.ID, err)
		}
	}
	return nil
}

// Convert returns the body sub receives for ev, an event of topic, appended
// to dst (an empty slice whose spare capacity, if any, is lent for the
// copy): the CloudEvent of an EventGridSchema event for a subscription
// that takes CloudEvents (docs/design.md#schema-conversion), and ev.Body
// itself otherwise, or for an event built as its CloudEvent already. It is
// the dispatcher's Transform. Publishing validated the EventGridSchema
// event, so the conversion cannot fail on one; should it, the event goes
// as it is rather than not at all.
func Convert(dst []byte, topic eventgrid.Topic, sub *eventgrid.EventSubscription, ev *eventgrid.Event) []byte {
	if ev.Converted || !schema.Converts(topic.InputSchema, sub.EventDeliverySchema) {
		return ev.Body
	}
	if out, err := schema.AppendCloudEventOf(dst, ev); err == nil {
		return out
	}
	return ev.Body
}
