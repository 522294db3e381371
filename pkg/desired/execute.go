package desired

import (
	"context"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Store is the registry as the Reconciler changes it. Every change carries
// its owner, and the store refuses one to a resource another owner manages
// (eventgrid.EConflict) under the lock that makes the change, so a
// declaration never takes over what the REST API created meanwhile.
type Store interface {
	PutTopic(ctx context.Context, t eventgrid.Topic) (eventgrid.Topic, bool, error)
	PutSubscription(ctx context.Context, sub eventgrid.EventSubscription) (*eventgrid.EventSubscription, bool, error)
	DeleteOwnedSubscription(ctx context.Context, topic, name string, owner eventgrid.Owner) error
	ReleaseTopic(ctx context.Context, name string, owner eventgrid.Owner) (kept int, err error)
}

// maxParallelPuts bounds the subscription puts of one apply that run at
// once: each may wait for its endpoint's validation handshake, and one
// endpoint that hangs must not hold the others back.
const maxParallelPuts = 8

// run carries out one plan for one source.
type run struct {
	store Store
	owner eventgrid.Owner
	log   zerolog.Logger
	d     declaration
	st    *state
	res   Result
	ok    []bool // by step: it succeeded
}

// execute runs the steps of p in order; a step whose prerequisites failed
// is skipped. It returns ctx's error if ctx ends first.
func (x *run) execute(ctx context.Context, p plan) error {
	x.res.Unchanged = p.unchanged
	for _, s := range p.skips {
		x.fail(s.topic, s.name, s.err)
	}
	x.ok = make([]bool, len(p.ops))
	for i := 0; i < len(p.ops); {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p.ops[i].kind == putSub {
			j := i + 1
			for j < len(p.ops) && p.ops[j].kind == putSub {
				j++
			}
			x.putSubs(ctx, p.ops[i:j], i)
			i = j
			continue
		}
		if o := p.ops[i]; x.blocked(p, o) {
			x.skipBlocked(p, o)
		} else {
			x.ok[i] = x.step(ctx, o)
		}
		i++
	}
	return ctx.Err()
}

func (x *run) blocked(p plan, o op) bool {
	for _, a := range o.after {
		if !x.ok[a] {
			return true
		}
	}
	return false
}

// skipBlocked records why a step did not run: a topic stays while the
// subscriptions that were to move out of it could not.
func (x *run) skipBlocked(p plan, o op) {
	if o.kind != releaseTopic {
		return // a move whose new place failed: that failure is reported
	}
	var held []string
	for _, a := range o.after {
		if !x.ok[a] {
			held = append(held, p.ops[a].name)
		}
	}
	x.fail(true, o.name, topicHeld(o.name, held))
}

func (x *run) step(ctx context.Context, o op) bool {
	switch o.kind {
	case deleteSub, moveOut:
		return x.deleteSub(ctx, o)
	case putTopic:
		return x.putTopic(ctx, o)
	case releaseTopic:
		return x.releaseTopic(ctx, o)
	}
	return false
}

func (x *run) deleteSub(ctx context.Context, o op) bool {
	err := x.store.DeleteOwnedSubscription(ctx, o.topic, o.name, x.owner)
	switch code := eventgrid.ErrorCode(err); {
	case err == nil:
		x.res.DeletedSubscriptions = append(x.res.DeletedSubscriptions, SubscriptionName{Topic: o.topic, Name: o.name})
	case code == eventgrid.ESubscriptionMissing || code == eventgrid.ETopicNotFound:
	default:
		x.log.Warn().Str("topic", o.topic).Str("subscription", o.name).Str("error", FormatError(err)).Func(internal(err)).
			Msg("event subscription no longer declared here but not deleted")
		return false
	}
	delete(x.st.subs, subKey(o.topic, o.name))
	return true
}

func (x *run) putTopic(ctx context.Context, o op) bool {
	t := x.d.topics[o.entry]
	stored, _, err := x.store.PutTopic(ctx, t.topic)
	if err != nil {
		x.fail(true, t.name, err)
		return false
	}
	x.st.topics[strings.ToLower(stored.Name)] = ownedTopic{name: stored.Name, raw: t.raw, schema: stored.InputSchema}
	x.res.Topics = append(x.res.Topics, stored.Name)
	return true
}

// putSubs puts the subscriptions of ops (steps base…) at once, a few at a
// time, and records the outcomes in the order of the steps.
func (x *run) putSubs(ctx context.Context, ops []op, base int) {
	type outcome struct {
		stored *eventgrid.EventSubscription
		err    error
	}
	out := make([]outcome, len(ops))
	sem := make(chan struct{}, maxParallelPuts)
	var wg sync.WaitGroup
	for i, o := range ops {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s, _, err := x.store.PutSubscription(ctx, x.d.subs[o.entry].sub)
			out[i] = outcome{s, err}
		})
	}
	wg.Wait()
	for i, o := range ops {
		sd := x.d.subs[o.entry]
		if out[i].err != nil {
			x.fail(false, sd.name, out[i].err)
			continue
		}
		s := out[i].stored
		x.st.subs[subKey(s.Topic, s.Name)] = ownedSub{topic: s.Topic, name: s.Name, raw: sd.raw,
			endpointType: s.Destination.EndpointType, queue: s.Queue != nil}
		x.res.Subscriptions = append(x.res.Subscriptions, SubscriptionName{Topic: s.Topic, Name: s.Name})
		x.ok[base+i] = true
	}
}

func (x *run) releaseTopic(ctx context.Context, o op) bool {
	kept, err := x.store.ReleaseTopic(ctx, o.name, x.owner)
	switch {
	case err == nil && kept == 0:
		x.res.DeletedTopics = append(x.res.DeletedTopics, o.name)
		for k, s := range x.st.subs {
			if strings.EqualFold(s.topic, o.name) {
				delete(x.st.subs, k)
			}
		}
	case err == nil:
		x.log.Warn().Str("topic", o.name).Int("eventSubscriptions", kept).
			Msg("topic no longer declared but kept, with the event subscriptions that other sources or the REST API made on it; the REST API manages it now")
	case eventgrid.ErrorCode(err) != eventgrid.ETopicNotFound:
		x.log.Warn().Str("topic", o.name).Str("error", FormatError(err)).Func(internal(err)).Msg("topic no longer declared but not deleted")
		return false
	}
	delete(x.st.topics, strings.ToLower(o.name))
	return true
}

// fail records a skipped entry with its error in the declaration's terms.
func (x *run) fail(topic bool, name string, err error) {
	err = inDeclarationTerms(err)
	m := &x.res.Errors.EventSubscriptions
	if topic {
		m = &x.res.Errors.Topics
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[name] = FormatError(err)
	if passing(err) {
		x.res.passing = append(x.res.passing, name)
	}
	if eventgrid.HeldByAPI(err) {
		x.res.waiting = append(x.res.waiting, heldName{topic: topic, name: strings.ToLower(name)})
	}
}

// internal adds the detail of an error without an eventgrid code, which
// FormatError leaves out, to a log line.
func internal(err error) func(*zerolog.Event) {
	return func(e *zerolog.Event) {
		if eventgrid.ErrorCode(err) == eventgrid.EInternal {
			e.AnErr("cause", err)
		}
	}
}
