package registry

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
)

// Route is one subscription of a topic with its compiled filter.
type Route struct {
	Subscription *eventgrid.EventSubscription
	Matcher      *filter.Matcher
}

// Registry is the in-memory store of topics and subscriptions. It is safe for
// concurrent use.
//
// Lock order: Registry.mu is held while the Observer is called, so the
// observer's own locks come after it and it must never call back into the
// Registry.
type Registry struct {
	opts     Options
	observer eventgrid.SubscriptionObserver

	mu      sync.RWMutex
	topics  map[string]*topicEntry // by lower-cased name
	nextUID uint64
}

type topicEntry struct {
	topic eventgrid.Topic
	// released is the source whose declaration of the topic ended while
	// it held event subscriptions of others, so that it passed to the REST
	// API (the zero Owner) rather than going; zero otherwise.
	released eventgrid.Owner
	subs     map[string]*subEntry // by lower-cased name
	// routes is replaced, never modified, on every change, so the publish
	// path can use a snapshot after releasing Registry.mu.
	routes []Route
}

type subEntry struct {
	sub     *eventgrid.EventSubscription
	matcher *filter.Matcher
}

var (
	_ eventgrid.TopicService        = (*Registry)(nil)
	_ eventgrid.SubscriptionService = (*Registry)(nil)
)

// New returns an empty registry. observer, if not nil, is told about every
// subscription change, and about every topic created and deleted when it
// is an eventgrid.TopicObserver too.
func New(opts Options, observer eventgrid.SubscriptionObserver) *Registry {
	return &Registry{opts: opts, observer: observer, topics: map[string]*topicEntry{}}
}

func key(name string) string { return strings.ToLower(name) }

// PutTopic implements eventgrid.TopicService.
func (r *Registry) PutTopic(_ context.Context, t eventgrid.Topic) (eventgrid.Topic, bool, error) {
	if err := ValidateName(t.Name, "Topic", r.opts.MaxNameLength); err != nil {
		return eventgrid.Topic{}, false, err
	}
	if t.InputSchema == "" {
		t.InputSchema = eventgrid.EventGridSchema
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.topics[key(t.Name)]; ok {
		if err := checkTopicOwner(e, t.Owner); err != nil {
			return eventgrid.Topic{}, false, err
		}
		if e.topic.InputSchema != t.InputSchema && len(e.subs) > 0 {
			return eventgrid.Topic{}, false, eventgrid.Errorf(eventgrid.EInvalidSchema, "Topic %q has %d event subscription(s) with delivery schema %s; delete them before changing its inputSchema to %s.", e.topic.Name, len(e.subs), e.topic.InputSchema, t.InputSchema)
		}
		e.topic.InputSchema = t.InputSchema
		return e.topic, false, nil
	}
	if len(r.topics) >= r.opts.MaxTopics {
		return eventgrid.Topic{}, false, eventgrid.Errorf(eventgrid.ELimitExceeded, "The module already holds %d topics, its limit (broker__maxTopics).", r.opts.MaxTopics)
	}
	e := &topicEntry{topic: t, subs: map[string]*subEntry{}}
	r.topics[key(t.Name)] = e
	if o, ok := r.observer.(eventgrid.TopicObserver); ok {
		o.TopicCreated(t)
	}
	return t, true, nil
}

// Topic implements eventgrid.TopicService.
func (r *Registry) Topic(_ context.Context, name string) (eventgrid.Topic, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, err := r.topicLocked(name)
	if err != nil {
		return eventgrid.Topic{}, err
	}
	return e.topic, nil
}

// Topics implements eventgrid.TopicService.
func (r *Registry) Topics(context.Context) ([]eventgrid.Topic, error) {
	r.mu.RLock()
	ts := make([]eventgrid.Topic, 0, len(r.topics))
	for _, e := range r.topics {
		ts = append(ts, e.topic)
	}
	r.mu.RUnlock()
	slices.SortFunc(ts, func(a, b eventgrid.Topic) int { return strings.Compare(key(a.Name), key(b.Name)) })
	return ts, nil
}

// DeleteTopic implements eventgrid.TopicService.
func (r *Registry) DeleteTopic(_ context.Context, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.topicLocked(name)
	if err != nil {
		return err
	}
	if err := checkTopicDelete(e, eventgrid.Owner{}); err != nil {
		return err
	}
	r.deleteTopicLocked(e)
	return nil
}

func (r *Registry) deleteTopicLocked(e *topicEntry) {
	delete(r.topics, key(e.topic.Name))
	for _, s := range sortedSubs(e) {
		r.notifyDeleted(s.sub)
	}
	if o, ok := r.observer.(eventgrid.TopicObserver); ok {
		o.TopicDeleted(e.topic)
	}
}

// Routes returns a topic and a snapshot of its subscriptions with their
// compiled filters, for the publish path. The snapshot is shared and must not
// be modified. It returns ETopicNotFound if the topic does not exist.
func (r *Registry) Routes(name string) (eventgrid.Topic, []Route, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, err := r.topicLocked(name)
	if err != nil {
		return eventgrid.Topic{}, nil, err
	}
	return e.topic, e.routes, nil
}

// PutSubscription implements eventgrid.SubscriptionService.
// With Options.Handshake set, the endpoint is validated first, without the
// registry's lock held (see putWithHandshake).
func (r *Registry) PutSubscription(ctx context.Context, sub eventgrid.EventSubscription) (*eventgrid.EventSubscription, bool, error) {
	if err := ValidateName(sub.Name, "Event subscription", r.opts.MaxNameLength); err != nil {
		return nil, false, err
	}
	if r.opts.Handshake != nil {
		return r.putWithHandshake(ctx, sub)
	}
	return r.putSubscription(sub, nil)
}

// putSubscription validates and stores sub. With expect not nil, it stores
// sub only if the subscription it replaces is still expect.replaced (nil:
// none), and otherwise returns errChanged.
func (r *Registry) putSubscription(sub eventgrid.EventSubscription, expect *expectation) (*eventgrid.EventSubscription, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.topicLocked(sub.Topic)
	if err != nil {
		return nil, false, err
	}
	sub.Topic = e.topic.Name
	old, exists := e.subs[key(sub.Name)]
	if exists {
		if err := checkOwner(subWhat(sub.Topic, old.sub.Name), old.sub.Owner, sub.Owner); err != nil {
			return nil, false, err
		}
	}
	m, err := r.opts.validateSubscription(&sub, e.topic)
	if err != nil {
		return nil, false, err
	}
	if expect != nil && !expect.holds(old) {
		return nil, false, errChanged
	}
	if exists {
		sub.Name = old.sub.Name
		sub.UID = old.sub.UID
		if g, ok := r.observer.(eventgrid.SubscriptionGuard); ok {
			if err := g.CheckSubscriptionPut(old.sub, &sub); err != nil {
				return nil, false, err
			}
		}
	} else {
		if len(e.subs) >= r.opts.MaxSubscriptionsPerTopic {
			return nil, false, eventgrid.Errorf(eventgrid.ELimitExceeded, "Topic %q already has %d event subscriptions, its limit (broker__maxSubscriptionsPerTopic).", e.topic.Name, r.opts.MaxSubscriptionsPerTopic)
		}
		r.nextUID++
		sub.UID = r.nextUID
	}
	stored := &sub
	e.subs[key(sub.Name)] = &subEntry{sub: stored, matcher: m}
	e.rebuildRoutes()
	expect.commit(stored)
	if r.observer != nil {
		r.observer.SubscriptionPut(stored)
	}
	return stored, !exists, nil
}

// Subscription implements eventgrid.SubscriptionService.
func (r *Registry) Subscription(_ context.Context, topic, name string) (*eventgrid.EventSubscription, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, _, err := r.subLocked(topic, name)
	if err != nil {
		return nil, err
	}
	return s.sub, nil
}

// Subscriptions implements eventgrid.SubscriptionService.
func (r *Registry) Subscriptions(_ context.Context, topic string) ([]*eventgrid.EventSubscription, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, err := r.topicLocked(topic)
	if err != nil {
		return nil, err
	}
	subs := make([]*eventgrid.EventSubscription, 0, len(e.subs))
	for _, s := range sortedSubs(e) {
		subs = append(subs, s.sub)
	}
	return subs, nil
}

// DeleteSubscription implements eventgrid.SubscriptionService.
func (r *Registry) DeleteSubscription(_ context.Context, topic, name string) error {
	return r.deleteSubscription(topic, name, eventgrid.Owner{})
}

func (r *Registry) deleteSubscription(topic, name string, by eventgrid.Owner) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, e, err := r.subLocked(topic, name)
	if err != nil {
		return err
	}
	if err := checkOwner(subWhat(e.topic.Name, s.sub.Name), s.sub.Owner, by); err != nil {
		return err
	}
	delete(e.subs, key(name))
	e.rebuildRoutes()
	r.notifyDeleted(s.sub)
	return nil
}

func (r *Registry) notifyDeleted(s *eventgrid.EventSubscription) {
	if r.observer != nil {
		r.observer.SubscriptionDeleted(s)
	}
}

func (r *Registry) topicLocked(name string) (*topicEntry, error) {
	e, ok := r.topics[key(name)]
	if !ok {
		return nil, eventgrid.Errorf(eventgrid.ETopicNotFound, "Topic %q does not exist.", name)
	}
	return e, nil
}

func (r *Registry) subLocked(topic, name string) (*subEntry, *topicEntry, error) {
	e, err := r.topicLocked(topic)
	if err != nil {
		return nil, nil, err
	}
	s, ok := e.subs[key(name)]
	if !ok {
		return nil, nil, eventgrid.Errorf(eventgrid.ESubscriptionMissing, "Event subscription %q does not exist in topic %q.", name, e.topic.Name)
	}
	return s, e, nil
}

func (e *topicEntry) rebuildRoutes() {
	rs := make([]Route, 0, len(e.subs))
	for _, s := range sortedSubs(e) {
		rs = append(rs, Route{Subscription: s.sub, Matcher: s.matcher})
	}
	e.routes = rs
}

func sortedSubs(e *topicEntry) []*subEntry {
	subs := make([]*subEntry, 0, len(e.subs))
	for _, s := range e.subs {
		subs = append(subs, s)
	}
	slices.SortFunc(subs, func(a, b *subEntry) int { return strings.Compare(key(a.sub.Name), key(b.sub.Name)) })
	return subs
}
