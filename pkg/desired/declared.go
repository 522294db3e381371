package desired

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// declaration is what one source declares, entry by entry, each decoded as
// the management API would decode it. An entry that cannot be decoded keeps
// its error: it is skipped, and what the source applied before under its
// name stays in force.
type declaration struct {
	topics []declaredTopic // by lower-cased name
	subs   []declaredSub   // by lower-cased name
	// subNames holds the lower-cased names of the subscriptions declared
	// (not null), even those that cannot be applied.
	subNames map[string]bool
}

type declaredTopic struct {
	name  string
	raw   []byte // compacted
	topic eventgrid.Topic
	err   error
	null  bool // declared as null: not declared
}

type declaredSub struct {
	name string
	raw  []byte // compacted
	sub  eventgrid.EventSubscription
	err  error
	null bool
}

// declare decodes the entries of a parsed document for owner.
func declare(topics, subs []entry, owner eventgrid.Owner) declaration {
	d := declaration{subNames: map[string]bool{}}
	seen := map[string]bool{}
	for _, en := range topics {
		t := declaredTopic{name: en.name, raw: compact(en.raw), null: rawjson.KindOf(en.raw) == rawjson.Null}
		switch {
		case seen[strings.ToLower(en.name)]:
			t.err = duplicate("topic", en.name)
		case !t.null:
			if t.err = entryShape(en.raw); t.err == nil {
				t.topic, t.err = resource.DecodeTopicProperties(en.raw, "", en.name)
				t.topic.Owner = owner
			}
		}
		seen[strings.ToLower(en.name)] = true
		d.topics = append(d.topics, t)
	}
	clear(seen)
	for _, en := range subs {
		s := declaredSub{name: en.name, raw: compact(en.raw), null: rawjson.KindOf(en.raw) == rawjson.Null}
		switch {
		case seen[strings.ToLower(en.name)]:
			s.err = duplicate("event subscription", en.name)
		case !s.null:
			if s.err = entryShape(en.raw); s.err == nil {
				s.sub, s.err = resource.DecodeSubscriptionProperties(en.raw, "", "", en.name)
				s.sub.Owner = owner
			}
		}
		seen[strings.ToLower(en.name)] = true
		if !s.null {
			d.subNames[strings.ToLower(en.name)] = true
		}
		d.subs = append(d.subs, s)
	}
	return d
}

// declares reports whether d declares a subscription by that name (even
// one it cannot apply).
func (d declaration) declares(name string) bool { return d.subNames[strings.ToLower(name)] }

// topic returns the declared topic of that name.
func (d declaration) topic(name string) (declaredTopic, bool) {
	i := slices.IndexFunc(d.topics, func(t declaredTopic) bool { return !t.null && strings.EqualFold(t.name, name) })
	if i < 0 {
		return declaredTopic{}, false
	}
	return d.topics[i], true
}

func duplicate(what, name string) error {
	return eventgrid.Errorf(eventgrid.EInvalidName, "The %s %q is declared more than once; names are case-insensitive.", what, name)
}

// entryShape refuses an entry that is neither an object nor a string
// holding one.
func entryShape(raw []byte) error {
	if s, ok := rawjson.Unquote(raw); ok {
		raw = rawjson.TrimSpace([]byte(s))
	}
	if rawjson.KindOf(raw) != rawjson.Object {
		return eventgrid.Errorf(eventgrid.EBadRequest, "The declaration must be a JSON object (or a string holding one).")
	}
	return nil
}

// compact returns raw in a canonical form (members sorted, no
// insignificant white space), so that a declaration reformatted or
// reordered is not taken for a change.
func compact(raw []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			return b
		}
	}
	return slices.Clone(raw)
}
