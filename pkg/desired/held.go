package desired

import (
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// held are the names the entries of one source wait for the REST API to
// delete, and the channel that applies the source again.
type held struct {
	names map[heldName]bool
	due   chan struct{}
}

var (
	_ eventgrid.SubscriptionObserver = (*Reconciler)(nil)
	_ eventgrid.TopicObserver        = (*Reconciler)(nil)
)

// setHeld records what owner's last apply, whose result is res, left
// waiting for the REST API. r.mu is held.
func (r *Reconciler) setHeld(owner eventgrid.Owner, res Result) {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	if len(res.waiting) == 0 {
		delete(r.held, owner)
		return
	}
	h := &held{names: map[heldName]bool{}, due: r.retryOf(owner).due}
	for _, n := range res.waiting {
		h.names[n] = true
	}
	r.held[owner] = h
}

// TopicDeleted implements eventgrid.TopicObserver for the registry: the
// deletion over the REST API of a topic a source's entry waits for
// (eventgrid.HeldByAPI) applies that source's declaration again at once,
// rather than on a timer that could run for ever. It never blocks and never
// calls back into the registry, whose lock is held.
func (r *Reconciler) TopicDeleted(t eventgrid.Topic) {
	if !t.Owner.Declared() {
		r.released(heldName{topic: true, name: strings.ToLower(t.Name)})
	}
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver as
// TopicDeleted does for topics.
func (r *Reconciler) SubscriptionDeleted(s *eventgrid.EventSubscription) {
	if !s.Owner.Declared() {
		r.released(heldName{name: strings.ToLower(s.Name)})
	}
}

// TopicCreated implements eventgrid.TopicObserver; it does nothing.
func (r *Reconciler) TopicCreated(eventgrid.Topic) {}

// SubscriptionPut implements eventgrid.SubscriptionObserver; it does
// nothing.
func (r *Reconciler) SubscriptionPut(*eventgrid.EventSubscription) {}

// released signals the sources waiting for n.
func (r *Reconciler) released(n heldName) {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	for _, h := range r.held {
		if h.names[n] {
			select {
			case h.due <- struct{}{}:
			default: // one is pending already
			}
		}
	}
}
