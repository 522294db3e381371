package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// Load returns the declared configuration: inline (the desired_config
// setting) if it is set, else the content of file (desired_config_file).
// It returns nil and no error when neither is set, and an error when both
// are, when the file cannot be read, or when it is empty.
func Load(inline, file string) ([]byte, error) {
	hasInline := strings.TrimSpace(inline) != ""
	switch {
	case hasInline && file != "":
		return nil, errors.New("bootstrap: desired_config and desired_config_file are both set; set only one")
	case hasInline:
		return []byte(inline), nil
	case file == "":
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: reading desired_config_file: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("bootstrap: desired_config_file %s is empty", file)
	}
	return b, nil
}

// Result says what Apply did.
type Result struct {
	// Topics and Subscriptions list what was created or updated, with the
	// names as stored, in the order applied. DeletedTopics lists the topics
	// declared null that existed.
	Topics        []string
	DeletedTopics []string
	Subscriptions []SubscriptionName
	// Errors holds one message per skipped entry.
	Errors Errors
}

// SubscriptionName names an event subscription.
type SubscriptionName struct {
	Topic, Name string
}

// Errors are the messages of the skipped entries by name, shaped like the
// errors.topics and errors.eventSubscriptions maps of the module twin's
// reported properties: "HttpStatusCode='BadRequest'
// ErrorCode='InvalidDestination' Message='…'", with the status the API
// answers the same error with. A map is nil when it has no entry.
type Errors struct {
	Topics             map[string]string `json:"topics,omitempty"`
	EventSubscriptions map[string]string `json:"eventSubscriptions,omitempty"`
}

// Len returns the number of skipped entries.
func (e Errors) Len() int { return len(e.Topics) + len(e.EventSubscriptions) }

// entry is one member of the topics or eventSubscriptions map.
type entry struct {
	name string
	raw  []byte
}

// Apply creates the topics and event subscriptions declared in doc, through
// topics and subs, which must be the services behind the management API.
//
// doc has the module twin's desired-properties shape,
//
//	{"topics": {"<name>": {<topic properties>} | null},
//	 "eventSubscriptions": {"<name>": {"topic": "<topic>", <subscription properties>}}}
//
// optionally wrapped as {"properties": {"desired": {…}}}; either map may be
// a string holding its JSON, and so may each entry and, as the resource
// package accepts, array-valued properties. Topics are applied first, then
// subscriptions, each in order of name. A topic set to null is deleted if it
// exists. Members whose names start with '$' (twin metadata) are ignored.
//
// Each entry that cannot be applied is logged, with its name and error
// message but none of its values, and skipped. Apply returns an error only
// if doc is not valid JSON of that shape, or if ctx is done, in which case
// the Result holds what was applied so far.
func Apply(ctx context.Context, doc []byte, topics eventgrid.TopicService, subs eventgrid.SubscriptionService, log zerolog.Logger) (Result, error) {
	var res Result
	topicEntries, subEntries, err := parse(doc)
	if err != nil {
		return res, err
	}
	fail := func(m *map[string]string, name string, err error) string {
		if *m == nil {
			*m = map[string]string{}
		}
		msg := FormatError(err)
		(*m)[name] = msg
		return msg
	}

	seen := map[string]bool{}
	for _, en := range topicEntries {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		err := applyTopic(ctx, topics, en, seen, &res)
		if err != nil {
			msg := fail(&res.Errors.Topics, en.name, err)
			log.Warn().Str("topic", en.name).Str("error", msg).Func(internal(err)).Msg("declared topic skipped")
		}
	}
	seen = map[string]bool{}
	for _, en := range subEntries {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		topic, err := applySubscription(ctx, subs, en, seen, &res)
		if err != nil {
			msg := fail(&res.Errors.EventSubscriptions, en.name, err)
			log.Warn().Str("topic", topic).Str("subscription", en.name).Str("error", msg).Func(internal(err)).
				Msg("declared event subscription skipped")
		}
	}
	log.Info().Strs("topics", res.Topics).Strs("deletedTopics", res.DeletedTopics).Int("eventSubscriptions", len(res.Subscriptions)).
		Int("errors", res.Errors.Len()).Msg("declarative configuration applied")
	return res, nil
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

func applyTopic(ctx context.Context, topics eventgrid.TopicService, en entry, seen map[string]bool, res *Result) error {
	if err := unique(en.name, "topic", seen); err != nil {
		return err
	}
	if rawjson.KindOf(en.raw) == rawjson.Null {
		switch err := topics.DeleteTopic(ctx, en.name); {
		case err == nil:
			res.DeletedTopics = append(res.DeletedTopics, en.name)
		case eventgrid.ErrorCode(err) != eventgrid.ETopicNotFound:
			return err
		}
		return nil
	}
	t, err := resource.DecodeTopicProperties(en.raw, "properties", en.name)
	if err != nil {
		return err
	}
	if t, _, err = topics.PutTopic(ctx, t); err != nil {
		return err
	}
	res.Topics = append(res.Topics, t.Name)
	return nil
}

// applySubscription returns the name of the subscription's topic, as far
// as it is known, for the log.
func applySubscription(ctx context.Context, subs eventgrid.SubscriptionService, en entry, seen map[string]bool, res *Result) (string, error) {
	if err := unique(en.name, "event subscription", seen); err != nil {
		return "", err
	}
	if rawjson.KindOf(en.raw) == rawjson.Null {
		return "", eventgrid.Errorf(eventgrid.EBadRequest, "Event subscriptions cannot be deleted through the desired configuration; delete %q through the API.", en.name)
	}
	sub, err := resource.DecodeSubscriptionProperties(en.raw, "properties", "", en.name)
	if err != nil {
		return sub.Topic, err
	}
	stored, _, err := subs.PutSubscription(ctx, sub)
	if err != nil {
		return sub.Topic, err
	}
	res.Subscriptions = append(res.Subscriptions, SubscriptionName{Topic: stored.Topic, Name: stored.Name})
	return stored.Topic, nil
}

// unique refuses a name declared twice: names are case-insensitive.
func unique(name, what string, seen map[string]bool) error {
	k := strings.ToLower(name)
	if seen[k] {
		return eventgrid.Errorf(eventgrid.EInvalidName, "The %s %q is declared more than once; names are case-insensitive.", what, name)
	}
	seen[k] = true
	return nil
}

// parse checks doc's shape and returns the entries of its two maps, each
// sorted by name.
func parse(doc []byte) (topics, subs []entry, err error) {
	doc = rawjson.TrimSpace(doc)
	switch {
	case len(doc) == 0:
		return nil, nil, errors.New("bootstrap: the desired configuration is empty")
	case !json.Valid(doc):
		return nil, nil, errors.New("bootstrap: the desired configuration is not valid JSON")
	case rawjson.KindOf(doc) != rawjson.Object:
		return nil, nil, errors.New("bootstrap: the desired configuration must be a JSON object")
	}
	root := doc
	if p, ok := rawjson.Member(root, "properties"); ok && rawjson.KindOf(p) == rawjson.Object {
		if d, ok := rawjson.Member(p, "desired"); ok {
			if rawjson.KindOf(d) != rawjson.Object {
				return nil, nil, errors.New("bootstrap: properties.desired must be a JSON object")
			}
			root = d
		}
	}
	if topics, err = section(root, "topics"); err != nil {
		return nil, nil, err
	}
	if subs, err = section(root, "eventSubscriptions"); err != nil {
		return nil, nil, err
	}
	return topics, subs, nil
}

// section returns the entries of the map root[name], which may be absent,
// null, an object or a string holding an object.
func section(root []byte, name string) ([]entry, error) {
	v, ok := rawjson.Member(root, name)
	if !ok || rawjson.KindOf(v) == rawjson.Null {
		return nil, nil
	}
	if s, isStr := rawjson.Unquote(v); isStr {
		v = rawjson.TrimSpace([]byte(s))
		if !json.Valid(v) {
			return nil, fmt.Errorf("bootstrap: %s is a string but not valid JSON", name)
		}
		if rawjson.KindOf(v) == rawjson.Null {
			return nil, nil
		}
	}
	var entries []entry
	var bad bool
	isObject := rawjson.ObjectEach(v, func(key, value []byte) bool {
		k, ok := rawjson.Unquote(append(append([]byte{'"'}, key...), '"'))
		if !ok {
			bad = true
			return false
		}
		if !strings.HasPrefix(k, "$") {
			entries = append(entries, entry{name: k, raw: value})
		}
		return true
	})
	if !isObject || bad {
		return nil, fmt.Errorf("bootstrap: %s must be a JSON object mapping names to properties", name)
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name))
	})
	return entries, nil
}
