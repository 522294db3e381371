package registry

import (
	"context"
	"errors"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// handshakeTries bounds how often a put starts over because the
// subscription changed while its endpoint was being validated.
const handshakeTries = 3

// errChanged reports that the subscription a put replaces changed after its
// handshake began.
var errChanged = errors.New("registry: subscription changed during the handshake")

// expectation is what a put saw before its handshake: the subscription it
// replaces, nil when there was none, and the commit step the handshake
// returned (nil when it has none), which runs with the registry's lock
// held, before the observer hears of the stored subscription.
type expectation struct {
	replaced *eventgrid.EventSubscription
	onStored func(stored *eventgrid.EventSubscription)
}

// commit runs the handshake's commit step.
func (x *expectation) commit(stored *eventgrid.EventSubscription) {
	if x != nil && x.onStored != nil {
		x.onStored(stored)
	}
}

func (x *expectation) holds(cur *subEntry) bool {
	if cur == nil {
		return x.replaced == nil
	}
	return cur.sub == x.replaced
}

// putWithHandshake validates sub and finds the subscription it replaces
// under the read lock, calls Options.Handshake with no lock held, then
// stores sub if nothing changed meanwhile. If the subscription was put or
// deleted by someone else during the handshake, it starts over (the
// handshake decides again whether the endpoint needs validating), a few
// times at most.
func (r *Registry) putWithHandshake(ctx context.Context, sub eventgrid.EventSubscription) (*eventgrid.EventSubscription, bool, error) {
	for range handshakeTries {
		checked, old, err := r.prepare(sub)
		if err != nil {
			return nil, false, err
		}
		onStored, err := r.opts.Handshake(ctx, old, &checked)
		if err != nil {
			// What the endpoint answered, or that it did not: the same
			// put may pass later.
			return nil, false, eventgrid.Passing(err)
		}
		stored, created, err := r.putSubscription(sub, &expectation{replaced: old, onStored: onStored})
		if !errors.Is(err, errChanged) {
			return stored, created, err
		}
	}
	return nil, false, eventgrid.Errorf(eventgrid.EUnavailable, "Event subscription %q kept changing while its endpoint was being validated; try again.", sub.Name)
}

// prepare returns sub validated (as it would be stored) and the
// subscription it would replace, or nil.
func (r *Registry) prepare(sub eventgrid.EventSubscription) (eventgrid.EventSubscription, *eventgrid.EventSubscription, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, err := r.topicLocked(sub.Topic)
	if err != nil {
		return sub, nil, err
	}
	sub.Topic = e.topic.Name
	old, ok := e.subs[key(sub.Name)]
	if ok {
		if err := checkOwner(subWhat(sub.Topic, old.sub.Name), old.sub.Owner, sub.Owner); err != nil {
			return sub, nil, err
		}
	}
	if _, err := r.opts.validateSubscription(&sub, e.topic); err != nil {
		return sub, nil, err
	}
	if ok {
		sub.Name, sub.UID = old.sub.Name, old.sub.UID
		return sub, old.sub, nil
	}
	return sub, nil, nil
}
