package dispatch

import (
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// SubscriptionPut implements eventgrid.SubscriptionObserver: it tells the
// mode of sub, and when sub changed mode, tells the old mode that it lost
// sub (CheckSubscriptionPut allows that only when the old mode holds none
// of its events).
func (d *Dispatcher) SubscriptionPut(sub *eventgrid.EventSubscription) {
	d.mu.Lock()
	prev, seen := d.subs[sub.UID]
	d.subs[sub.UID] = sub
	d.mu.Unlock()
	var paused bool
	if seen && prev.IsQueue() != sub.IsQueue() {
		// A pause made with :pause goes with the subscription to its
		// new mode; a declared one follows its declaration anyway.
		st, _ := d.modeOf(prev).Status(prev)
		paused = !st.PausedSince.IsZero() && !sub.Owner.Declared()
		d.modeOf(prev).SubscriptionDeleted(sub)
	}
	d.modeOf(sub).SubscriptionPut(sub)
	if paused {
		d.modeOf(sub).Pause(sub, true)
	}
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver.
func (d *Dispatcher) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	d.mu.Lock()
	delete(d.subs, sub.UID)
	d.mu.Unlock()
	d.modeOf(sub).SubscriptionDeleted(sub)
}

// CheckSubscriptionPut implements eventgrid.SubscriptionGuard: a
// subscription that holds events cannot change its deliveryMode, which
// would drop them.
func (d *Dispatcher) CheckSubscriptionPut(old, sub *eventgrid.EventSubscription) error {
	if old.IsQueue() == sub.IsQueue() {
		return nil
	}
	n := d.modeOf(old).HeldEvents(old)
	switch {
	case n == 0:
		return nil
	case old.IsQueue():
		return eventgrid.Errorf(eventgrid.EEventsHeld, "Event subscription %q of topic %q holds %d events (available, locked or delayed); changing its deliveryMode from Queue to Push would drop them. Receive and settle them first, or delete the subscription to drop them.", old.Name, old.Topic, n)
	}
	return eventgrid.Errorf(eventgrid.EEventsHeld, "Event subscription %q of topic %q holds %d events for delivery to its destination (queued, waiting to be retried or in flight); changing its deliveryMode from Push to Queue would drop them. Wait until its deliveryStatus shows none, or delete the subscription to drop them.", old.Name, old.Topic, n)
}

// HeldEvents implements eventgrid.EventHolder: the events of sub its mode
// holds.
func (d *Dispatcher) HeldEvents(sub *eventgrid.EventSubscription) int {
	return d.modeOf(sub).HeldEvents(sub)
}

// Holding is what one subscription holds in the broker's budget: the
// deliveries still to be made (queued, waiting to be retried, in flight,
// available, locked or delayed) and the bytes of their bodies.
type Holding struct {
	Subscription *eventgrid.EventSubscription
	Events       int64
	Bytes        int64
}

// Holdings is what the broker holds: the budget in use, and each
// subscription's part of it, push and queue alike.
type Holdings struct {
	Events, Bytes int64
	Subscriptions []Holding
	// Waiting is the publish requests held for room now.
	Waiting int
}

// Holdings returns what the broker holds now.
func (d *Dispatcher) Holdings() Holdings {
	d.mu.Lock()
	subs := make([]*eventgrid.EventSubscription, 0, len(d.subs))
	for _, s := range d.subs {
		subs = append(subs, s)
	}
	d.mu.Unlock()
	var h Holdings
	h.Events, h.Bytes = d.opts.Budget.Used()
	h.Waiting = d.opts.Budget.Waiting()
	h.Subscriptions = make([]Holding, 0, len(subs))
	for _, s := range subs {
		if sh, _ := d.modeOf(s).Share(s); sh != nil {
			events, bytes := sh.Used()
			h.Subscriptions = append(h.Subscriptions, Holding{Subscription: s, Events: events, Bytes: bytes})
		}
	}
	return h
}
