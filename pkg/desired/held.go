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

// setHeld records what owner's last apply, whose result is res, left
// waiting for the REST API. The apply began after deletions deletions over
// the REST API: one that came since, while the apply ran, may have removed
// what an entry waits for before it was recorded here, so the source is
// applied again. r.mu is held.
func (r *Reconciler) setHeld(owner eventgrid.Owner, res Result, deletions uint64) {
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
	if r.deletions != deletions {
		h.signal()
	}
}

// deletionsSoFar returns how many deletions over the REST API the
// reconciler was told of.
func (r *Reconciler) deletionsSoFar() uint64 {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	return r.deletions
}

// signal applies the source again, once however often it is called
// before that.
func (h *held) signal() {
	select {
	case h.due <- struct{}{}:
	default: // one is pending already
	}
}

// TopicDeleted tells the reconciler that the registry deleted t (the
// registry's observers call it, with its lock held): the deletion over the
// REST API of a topic a source's entry waits for (eventgrid.HeldByAPI)
// applies that source's declaration again at once, rather than on a timer
// that could run for ever. It never blocks and never calls back into the
// registry.
func (r *Reconciler) TopicDeleted(t eventgrid.Topic) {
	if !t.Owner.Declared() {
		r.released(heldName{topic: true, name: strings.ToLower(t.Name)})
	}
}

// SubscriptionDeleted is TopicDeleted for event subscriptions.
func (r *Reconciler) SubscriptionDeleted(s *eventgrid.EventSubscription) {
	if !s.Owner.Declared() {
		r.released(heldName{name: strings.ToLower(s.Name)})
	}
}

// released signals the sources waiting for n.
func (r *Reconciler) released(n heldName) {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	r.deletions++
	for _, h := range r.held {
		if h.names[n] {
			h.signal()
		}
	}
}
