package registry

import (
	"context"
	"fmt"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Ownership: every topic and subscription has an Owner, the REST API (the
// zero Owner) or a source of declared configuration. A put or delete names
// its owner, and the registry refuses it, under the same lock that makes
// the change, when the resource exists with another owner. So neither the
// API nor a declaration can change or delete what the other manages, and a
// declaration never takes over what the API created between a look and a
// put.

func topicWhat(name string) string { return fmt.Sprintf("Topic %q", name) }

func subWhat(topic, name string) string {
	return fmt.Sprintf("Event subscription %q of topic %q", name, topic)
}

// checkOwner refuses by a change to what have manages.
func checkOwner(what string, have, by eventgrid.Owner) error {
	if have == by {
		return nil
	}
	return eventgrid.OwnerConflict(what, have, by)
}

// DeleteOwnedSubscription deletes a subscription that owner declared. It
// returns ETopicNotFound or ESubscriptionMissing if either does not exist,
// and EConflict if another owner manages the subscription.
func (r *Registry) DeleteOwnedSubscription(_ context.Context, topic, name string, owner eventgrid.Owner) error {
	return r.deleteSubscription(topic, name, owner)
}

// ReleaseTopic ends owner's declaration of a topic. When every subscription
// the topic holds is owner's, it deletes the topic with them and returns 0.
// Otherwise it deletes nothing: the topic stays, with its subscriptions, and
// passes to the REST API (its Owner becomes the zero Owner); kept is the
// number of subscriptions other owners hold on it. It returns
// ETopicNotFound if the topic does not exist and EConflict if another owner
// manages it.
func (r *Registry) ReleaseTopic(_ context.Context, name string, owner eventgrid.Owner) (kept int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.topicLocked(name)
	if err != nil {
		return 0, err
	}
	if err := checkTopicOwner(e, owner); err != nil {
		return 0, err
	}
	for _, s := range e.subs {
		if s.sub.Owner != owner {
			kept++
		}
	}
	if kept > 0 {
		e.topic.Owner, e.released = eventgrid.Owner{}, owner
		return kept, nil
	}
	r.deleteTopicLocked(e)
	return 0, nil
}

// checkTopicOwner refuses by a change to topic e, which another owner
// manages, saying how it came to: created over the REST API, or released
// to it.
func checkTopicOwner(e *topicEntry, by eventgrid.Owner) error {
	t := &e.topic
	if t.Owner != by && by.Declared() && !t.Owner.Declared() && e.released.Declared() {
		return eventgrid.ReleasedConflict(topicWhat(t.Name), e.released)
	}
	return checkOwner(topicWhat(t.Name), t.Owner, by)
}

// checkTopicDelete refuses by the deletion of topic e, which deletes its
// subscriptions too: the topic and each of them must be by's.
func checkTopicDelete(e *topicEntry, by eventgrid.Owner) error {
	if err := checkTopicOwner(e, by); err != nil {
		return err
	}
	for _, s := range sortedSubs(e) {
		if err := checkOwner(subWhat(e.topic.Name, s.sub.Name), s.sub.Owner, by); err != nil {
			return eventgrid.Errorf(eventgrid.EConflict, "Topic %q cannot be deleted with the event subscriptions it holds: %s", e.topic.Name, eventgrid.ErrorMessage(err))
		}
	}
	return nil
}
