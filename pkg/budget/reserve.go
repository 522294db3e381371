package budget

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Reserve decides whether a request can be held: events deliveries in all
// and bytes bytes (the request's size and its converted copies), of which
// claims are each subscription's part. It is the broker's one decision, for
// push and queue subscriptions alike:
//
//   - a request larger than a bound it would have to fit, however empty the
//     broker, gets EPayloadTooLarge, naming the bound (and the subscription);
//   - one that does not fit now gets EQueueFull, naming the subscription
//     whose share is full when that is why;
//   - either error is a *eventgrid.Refusal, which says why;
//   - otherwise its room is taken, from every share and broker-wide, and the
//     returned Hold gives it back, delivery by delivery.
//
// It is all or nothing: on an error nothing is held.
func (b *Budget) Reserve(events, bytes int64, accepted time.Time, claims []Claim) (*Hold, error) {
	if err := b.neverFits(events, bytes, claims); err != nil {
		return nil, err
	}
	l := &b.limits
	for i, c := range claims {
		if c.Share == nil {
			continue
		}
		if !c.Share.take(c.Events, c.Bytes, l) {
			undo(claims[:i])
			return nil, b.shareFull(c)
		}
	}
	if !b.take(events, bytes) {
		undo(claims)
		return nil, b.brokerFull()
	}
	h := &Hold{b: b, size: bytes, Accepted: accepted}
	h.refs.Store(events)
	return h, nil
}

// shareFull is the EQueueFull of a request that does not fit c's share.
func (b *Budget) shareFull(c Claim) error {
	l := &b.limits
	return eventgrid.Refuse(eventgrid.RefusedSubscriptionFull, eventgrid.EQueueFull, "Event subscription %s holds its share of queued events (broker__maxQueuedEventsPerSubscription %d, broker__maxQueuedBytesPerSubscription %d) while its subscriber catches up; retry later.", c.Sub.Name, l.EventsPerSubscription, l.BytesPerSubscription)
}

// brokerFull is the EQueueFull of a request that does not fit the broker's
// own bounds.
func (b *Budget) brokerFull() error {
	l := &b.limits
	return eventgrid.Refuse(eventgrid.RefusedBrokerFull, eventgrid.EQueueFull, "The broker holds its limit of queued events (broker__maxQueuedEvents %d, broker__maxQueuedBytes %d) while subscribers catch up; retry later.", l.Events, l.Bytes)
}

// neverFits returns EPayloadTooLarge for a request larger than a bound it
// would have to fit, however empty the broker.
func (b *Budget) neverFits(events, bytes int64, claims []Claim) error {
	l := &b.limits
	switch {
	case events > l.Events:
		return eventgrid.Refuse(eventgrid.RefusedTooLarge, eventgrid.EPayloadTooLarge, "The request makes %d deliveries, more than the broker ever queues (broker__maxQueuedEvents %d); send fewer events per request.", events, l.Events)
	case bytes > l.Bytes:
		return eventgrid.Refuse(eventgrid.RefusedTooLarge, eventgrid.EPayloadTooLarge, "The request's events take %d bytes, more than the broker ever queues (broker__maxQueuedBytes %d); send fewer events per request.", bytes, l.Bytes)
	}
	for _, c := range claims {
		switch {
		case c.Events > l.EventsPerSubscription:
			return eventgrid.Refuse(eventgrid.RefusedTooLarge, eventgrid.EPayloadTooLarge, "The request makes %d deliveries to event subscription %s, more than one subscription ever queues (broker__maxQueuedEventsPerSubscription %d); send fewer events per request.", c.Events, c.Sub.Name, l.EventsPerSubscription)
		case c.Bytes > l.BytesPerSubscription:
			return eventgrid.Refuse(eventgrid.RefusedTooLarge, eventgrid.EPayloadTooLarge, "The request queues %d bytes for event subscription %s, more than one subscription ever queues (broker__maxQueuedBytesPerSubscription %d); send fewer events per request.", c.Bytes, c.Sub.Name, l.BytesPerSubscription)
		}
	}
	return nil
}

func (b *Budget) take(events, bytes int64) bool {
	if b.events.Add(events) > b.limits.Events {
		b.events.Add(-events)
		return false
	}
	if b.bytes.Add(bytes) > b.limits.Bytes {
		b.bytes.Add(-bytes)
		b.events.Add(-events)
		return false
	}
	return true
}

// undo gives back what claims took from their shares.
func undo(claims []Claim) {
	for _, c := range claims {
		if c.Share != nil {
			c.Share.give(c.Events, c.Bytes)
		}
	}
}
