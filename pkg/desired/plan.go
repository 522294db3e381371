package desired

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// state is what one source has applied: the topics and subscriptions it
// owns, each with the declaration it was last applied from.
type state struct {
	topics map[string]ownedTopic // by lower-cased name
	subs   map[string]ownedSub   // by subKey
}

type ownedTopic struct {
	name   string // as stored
	raw    []byte // the declaration, compacted
	schema eventgrid.InputSchema
}

type ownedSub struct {
	topic, name  string // as stored
	raw          []byte
	endpointType eventgrid.EndpointType
	queue        bool
}

func newState() *state {
	return &state{topics: map[string]ownedTopic{}, subs: map[string]ownedSub{}}
}

func subKey(topic, name string) string { return strings.ToLower(topic) + "/" + strings.ToLower(name) }

// opKind is what one step of a plan does.
type opKind int

const (
	// deleteSub deletes a subscription the source no longer declares.
	deleteSub opKind = iota + 1
	// putTopic creates or updates a declared topic.
	putTopic
	// putSub creates or updates a declared subscription.
	putSub
	// moveOut deletes the old place of a subscription now declared on
	// another topic, once its new place is in.
	moveOut
	// releaseTopic deletes a topic the source no longer declares, or
	// leaves it to the REST API when others hold subscriptions on it.
	releaseTopic
)

func (k opKind) String() string {
	return [...]string{"", "deleteSub", "putTopic", "putSub", "moveOut", "releaseTopic"}[k]
}

// op is one step of a plan.
type op struct {
	kind opKind
	// topic and name are the resource's: as stored for deleteSub, moveOut
	// and releaseTopic (name is the topic's), as declared for the puts.
	topic, name string
	// entry is the declaration's index (in topics or subs) of a put.
	entry int
	// after lists the steps that must have succeeded for this one to run.
	after []int
}

// skip is an entry the plan leaves as it is, and why.
type skip struct {
	topic bool // a topic entry, else a subscription entry
	name  string
	err   error
}

// plan is what it takes to go from what a source applied to what it
// declares: steps in the order they run, the entries left alone because
// they are applied as declared, and the entries skipped.
type plan struct {
	ops       []op
	unchanged int
	skips     []skip
}

func (p *plan) add(o op) int {
	p.ops = append(p.ops, o)
	return len(p.ops) - 1
}

// makePlan compares what d declares with what the source applied (s) and
// returns the steps that make them match, in this order:
//
//  1. the subscriptions no longer declared are deleted, first, so that the
//     limits count what is left;
//  2. the topics declared anew or differently are put;
//  3. the subscriptions declared anew or differently are put;
//  4. a subscription now declared on another topic leaves its old place
//     only once its new place is in, so a move to a topic that does not
//     exist leaves the last good version in force, events and all;
//  5. a topic no longer declared goes last, and only when the source
//     declares none of the subscriptions it holds (and the moves out of it
//     succeeded): one still declared there keeps it.
//
// An entry that could not be decoded is skipped, and what the source
// applied before under its name stays in force. makePlan has no side
// effect: the Reconciler carries the plan out.
func makePlan(d declaration, s *state) plan {
	var p plan
	p.deleteUndeclared(d, s)
	p.putTopics(d, s)
	moved := p.putSubs(d, s)
	p.releaseTopics(d, s, moved)
	return p
}

// deleteUndeclared plans the deletion of the subscriptions s holds that d
// no longer declares, under any topic.
func (p *plan) deleteUndeclared(d declaration, s *state) {
	for _, k := range slices.Sorted(maps.Keys(s.subs)) {
		if o := s.subs[k]; !d.declares(o.name) {
			p.add(op{kind: deleteSub, topic: o.topic, name: o.name})
		}
	}
}

// putTopics plans the puts of the topics d declares anew or differently.
func (p *plan) putTopics(d declaration, s *state) {
	for i, t := range d.topics {
		o, owned := s.topics[strings.ToLower(t.name)]
		switch {
		case t.null:
		case t.err != nil:
			p.skips = append(p.skips, skip{topic: true, name: t.name, err: t.err})
		case owned && bytes.Equal(o.raw, t.raw):
			p.unchanged++
		default:
			p.add(op{kind: putTopic, name: t.name, entry: i})
		}
	}
}

// putSubs plans the puts of the subscriptions d declares anew or
// differently, then the deletion of the old places of those it declares on
// another topic, each after its put. It returns the steps of those
// deletions by the subKey of the old place.
func (p *plan) putSubs(d declaration, s *state) map[string]int {
	var moves []op
	var from []string
	places := map[string][]string{} // subKeys of s by lower-cased name
	for _, k := range slices.Sorted(maps.Keys(s.subs)) {
		n := strings.ToLower(s.subs[k].name)
		places[n] = append(places[n], k)
	}
	for i, sd := range d.subs {
		if sd.null {
			continue
		}
		if sd.err != nil {
			p.skips = append(p.skips, skip{name: sd.name, err: sd.err})
			continue
		}
		put := -1
		if o, here := s.subs[subKey(sd.sub.Topic, sd.name)]; here && bytes.Equal(o.raw, sd.raw) {
			p.unchanged++
		} else {
			put = p.add(op{kind: putSub, topic: sd.sub.Topic, name: sd.name, entry: i})
		}
		for _, k := range places[strings.ToLower(sd.name)] {
			if o := s.subs[k]; !strings.EqualFold(o.topic, sd.sub.Topic) {
				m := op{kind: moveOut, topic: o.topic, name: o.name}
				if put >= 0 {
					m.after = []int{put}
				}
				moves, from = append(moves, m), append(from, k)
			}
		}
	}
	moved := map[string]int{}
	for i, m := range moves {
		moved[from[i]] = p.add(m)
	}
	return moved
}

// releaseTopics plans the release of the topics s holds that d no longer
// declares, each after the moves out of it (moved). A topic that holds a
// subscription d still declares there is skipped: it stays.
func (p *plan) releaseTopics(d declaration, s *state, moved map[string]int) {
	for _, k := range slices.Sorted(maps.Keys(s.topics)) {
		o := s.topics[k]
		if _, declared := d.topic(o.name); declared {
			continue
		}
		rel := op{kind: releaseTopic, name: o.name}
		var held []string
		for _, sk := range slices.Sorted(maps.Keys(s.subs)) {
			so := s.subs[sk]
			switch m, moving := moved[sk]; {
			case !strings.EqualFold(so.topic, o.name) || !d.declares(so.name):
			case moving:
				rel.after = append(rel.after, m)
			default:
				held = append(held, so.name)
			}
		}
		if len(held) > 0 {
			p.skips = append(p.skips, skip{topic: true, name: o.name, err: topicHeld(o.name, held)})
			continue
		}
		p.add(rel)
	}
}

// topicHeld says why a topic no longer declared stays.
func topicHeld(topic string, subs []string) error {
	return eventgrid.Errorf(eventgrid.EBadRequest, "The topic %q is no longer declared but stays, with its events, while it holds event subscription(s) %s that are still declared; remove or move them too.", topic, quoteAll(subs))
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = `"` + n + `"`
	}
	return strings.Join(q, ", ")
}
