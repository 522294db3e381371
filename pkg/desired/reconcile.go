package desired

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// The sources of desired state. Each owns the topics and event
// subscriptions it declares.
const (
	// SourceInline is the desired_config setting, applied once at start.
	SourceInline = "desired_config"
	// SourceFile is the file desired_config_file names, followed live.
	SourceFile = "desired_config_file"
	// SourceTwin is the module twin's desired properties, followed live.
	SourceTwin = "moduleTwin"
)

// Result says what one Apply did.
type Result struct {
	// Topics and Subscriptions list what was created or updated, with the
	// names as stored, in the order applied; DeletedTopics and
	// DeletedSubscriptions what was deleted because the source no longer
	// declares it.
	Topics               []string
	DeletedTopics        []string
	Subscriptions        []SubscriptionName
	DeletedSubscriptions []SubscriptionName
	// Unchanged counts the declared entries that were already applied as
	// declared, and so were left alone.
	Unchanged int
	// Errors holds one message per skipped entry.
	Errors Errors
}

// Changed reports whether the Apply created, updated or deleted anything.
func (r Result) Changed() bool {
	return len(r.Topics)+len(r.DeletedTopics)+len(r.Subscriptions)+len(r.DeletedSubscriptions) > 0
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

// ownedTopic is a topic a source declared, as last applied.
type ownedTopic struct {
	source string
	name   string // as stored
	raw    []byte // the declaration, compacted
}

// ownedSub is an event subscription a source declared, as last applied.
type ownedSub struct {
	source      string
	topic, name string // as stored
	raw         []byte
	// stored is what the registry returned; while the registry still holds
	// this very value, nothing else has changed the subscription.
	stored *eventgrid.EventSubscription
}

// Reconciler makes the topics and event subscriptions of the registry
// match what each source of desired state declares. A source owns what it
// declared: what it stops declaring is deleted, what it changes is updated
// in place (an event subscription keeps its queued events as long as its
// name and topic stay the same), and what it declares again unchanged is
// left alone. Topics and subscriptions created through the management API
// are never changed or deleted: a declaration that names one is refused.
// It is safe for concurrent use; applies run one at a time.
type Reconciler struct {
	topics eventgrid.TopicService
	subs   eventgrid.SubscriptionService
	log    zerolog.Logger

	mu        sync.Mutex
	topicsOf  map[string]*ownedTopic // by lower-cased name
	subsOf    map[string]*ownedSub   // by subKey
	lastErrs  map[string]Errors      // by source: what was last warned about
	expected  map[string]bool
	attempted map[string]bool
	ready     atomic.Bool
}

// NewReconciler returns a Reconciler working through topics and subs,
// which must be the services behind the management API. It is ready until
// Expect names a source.
func NewReconciler(topics eventgrid.TopicService, subs eventgrid.SubscriptionService, log zerolog.Logger) *Reconciler {
	r := &Reconciler{
		topics: topics, subs: subs, log: log,
		topicsOf: map[string]*ownedTopic{}, subsOf: map[string]*ownedSub{}, lastErrs: map[string]Errors{},
		expected: map[string]bool{}, attempted: map[string]bool{},
	}
	r.ready.Store(true)
	return r
}

// Expect makes Ready wait for a first Apply from each of sources.
func (r *Reconciler) Expect(sources ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range sources {
		r.expected[s] = true
	}
	r.updateReady()
}

// Ready reports whether every expected source has had its first desired
// state applied (a document that could not be parsed counts: its error is
// logged and reported, and nothing more can come until the source changes).
func (r *Reconciler) Ready() bool { return r.ready.Load() }

func (r *Reconciler) updateReady() {
	for s := range r.expected {
		if !r.attempted[s] {
			r.ready.Store(false)
			return
		}
	}
	r.ready.Store(true)
}

func subKey(topic, name string) string { return strings.ToLower(topic) + "/" + strings.ToLower(name) }

// Apply makes the registry match doc, the whole desired state of source.
//
// doc has the module twin's desired-properties shape,
//
//	{"topics": {"<name>": {<topic properties>}},
//	 "eventSubscriptions": {"<name>": {"topic": "<topic>", <subscription properties>}}}
//
// optionally wrapped as {"properties": {"desired": {…}}}; either map may be
// a string holding its JSON, and so may each entry and, as the resource
// package accepts, array-valued properties. An entry set to null is not
// declared. Members whose names start with '$' (twin metadata) are ignored.
//
// Apply first deletes what source declared before and no longer declares
// (a topic is kept, and no longer owned, while it holds subscriptions that
// source does not own), then creates or updates topics, then
// subscriptions, each in order of name. An entry that cannot be applied is
// logged, with its name and error message but none of its values, and
// skipped; what source applied before under that name stays as it was.
//
// Apply returns an error only if doc is not valid JSON of that shape, in
// which case nothing changes, or if ctx is done, in which case the Result
// holds what was applied so far.
func (r *Reconciler) Apply(ctx context.Context, source string, doc []byte) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	log := r.log.With().Str("source", source).Logger()
	var res Result
	topicEntries, subEntries, err := parse(doc)
	if err != nil {
		r.attempted[source] = true
		r.updateReady()
		log.Error().Err(err).Msg("declarative configuration not applied")
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

	// What source declares now.
	topics := map[string]entry{}
	seen := map[string]bool{}
	for _, en := range topicEntries {
		if err := unique(en.name, "topic", seen); err != nil {
			fail(&res.Errors.Topics, en.name, err)
			continue
		}
		if rawjson.KindOf(en.raw) != rawjson.Null {
			topics[strings.ToLower(en.name)] = en
		}
	}
	type declaredSub struct {
		entry
		sub eventgrid.EventSubscription
		err error
	}
	var subs []declaredSub
	subNames := map[string]bool{}
	seen = map[string]bool{}
	for _, en := range subEntries {
		if err := unique(en.name, "event subscription", seen); err != nil {
			fail(&res.Errors.EventSubscriptions, en.name, err)
			continue
		}
		if rawjson.KindOf(en.raw) == rawjson.Null {
			continue
		}
		subNames[strings.ToLower(en.name)] = true
		d := declaredSub{entry: en}
		d.sub, d.err = resource.DecodeSubscriptionProperties(en.raw, "properties", "", en.name)
		subs = append(subs, d)
	}
	movedFrom := map[string]bool{} // owned subscriptions now declared on another topic
	for _, d := range subs {
		if d.err != nil {
			continue
		}
		for k, o := range r.subsOf {
			if o.source == source && strings.EqualFold(o.name, d.sub.Name) && !strings.EqualFold(o.topic, d.sub.Topic) {
				movedFrom[k] = true
			}
		}
	}

	// Deletions: subscriptions first, so that a topic left without them
	// can go.
	for _, k := range slices.Sorted(maps.Keys(r.subsOf)) {
		o := r.subsOf[k]
		if o.source != source || (subNames[strings.ToLower(o.name)] && !movedFrom[k]) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		switch err := r.subs.DeleteSubscription(ctx, o.topic, o.name); {
		case err == nil:
			res.DeletedSubscriptions = append(res.DeletedSubscriptions, SubscriptionName{Topic: o.topic, Name: o.name})
		case eventgrid.ErrorCode(err) != eventgrid.ESubscriptionMissing && eventgrid.ErrorCode(err) != eventgrid.ETopicNotFound:
			log.Warn().Str("topic", o.topic).Str("subscription", o.name).Str("error", FormatError(err)).Func(internal(err)).
				Msg("event subscription no longer declared but not deleted")
			continue
		}
		delete(r.subsOf, k)
	}
	for _, k := range slices.Sorted(maps.Keys(r.topicsOf)) {
		o := r.topicsOf[k]
		if o.source != source {
			continue
		}
		if _, ok := topics[k]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if foreign := r.foreignSubscriptions(ctx, o.name, source); foreign > 0 {
			log.Warn().Str("topic", o.name).Int("eventSubscriptions", foreign).
				Msg("topic no longer declared but kept, with its event subscriptions that other sources or the API created; it is no longer owned by the declarative configuration")
			delete(r.topicsOf, k)
			continue
		}
		switch err := r.topics.DeleteTopic(ctx, o.name); {
		case err == nil:
			res.DeletedTopics = append(res.DeletedTopics, o.name)
		case eventgrid.ErrorCode(err) != eventgrid.ETopicNotFound:
			log.Warn().Str("topic", o.name).Str("error", FormatError(err)).Func(internal(err)).Msg("topic no longer declared but not deleted")
			continue
		}
		delete(r.topicsOf, k)
		for sk, so := range r.subsOf {
			if strings.EqualFold(so.topic, o.name) {
				delete(r.subsOf, sk)
			}
		}
	}

	// Topics, then subscriptions, created or updated.
	for _, k := range slices.Sorted(maps.Keys(topics)) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		en := topics[k]
		changed, err := r.applyTopic(ctx, source, k, en)
		switch {
		case err != nil:
			fail(&res.Errors.Topics, en.name, err)
		case changed != "":
			res.Topics = append(res.Topics, changed)
		default:
			res.Unchanged++
		}
	}
	for _, d := range subs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if d.err != nil {
			fail(&res.Errors.EventSubscriptions, d.name, d.err)
			continue
		}
		stored, err := r.applySubscription(ctx, source, d.sub, compact(d.raw))
		switch {
		case err != nil:
			fail(&res.Errors.EventSubscriptions, d.name, err)
		case stored != nil:
			res.Subscriptions = append(res.Subscriptions, SubscriptionName{Topic: stored.Topic, Name: stored.Name})
		default:
			res.Unchanged++
		}
	}

	r.attempted[source] = true
	r.updateReady()
	r.logResult(log, source, res)
	return res, nil
}

// logResult warns about each skipped entry, unless the last Apply of
// source warned about it with the same message, and sums up.
func (r *Reconciler) logResult(log zerolog.Logger, source string, res Result) {
	last := r.lastErrs[source]
	for _, name := range slices.Sorted(maps.Keys(res.Errors.Topics)) {
		if msg := res.Errors.Topics[name]; last.Topics[name] != msg {
			log.Warn().Str("topic", name).Str("error", msg).Msg("declared topic skipped")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(res.Errors.EventSubscriptions)) {
		if msg := res.Errors.EventSubscriptions[name]; last.EventSubscriptions[name] != msg {
			log.Warn().Str("subscription", name).Str("error", msg).Msg("declared event subscription skipped")
		}
	}
	r.lastErrs[source] = res.Errors
	if !res.Changed() && sameErrors(res.Errors, last) {
		log.Debug().Int("unchanged", res.Unchanged).Msg("declarative configuration unchanged")
		return
	}
	subNames := func(ns []SubscriptionName) []string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = n.Topic + "/" + n.Name
		}
		return out
	}
	log.Info().Strs("topics", res.Topics).Strs("deletedTopics", res.DeletedTopics).
		Strs("eventSubscriptions", subNames(res.Subscriptions)).Strs("deletedEventSubscriptions", subNames(res.DeletedSubscriptions)).
		Int("unchanged", res.Unchanged).Int("errors", res.Errors.Len()).Msg("declarative configuration applied")
}

func sameErrors(a, b Errors) bool {
	return maps.Equal(a.Topics, b.Topics) && maps.Equal(a.EventSubscriptions, b.EventSubscriptions)
}

// foreignSubscriptions counts the subscriptions of topic that source does
// not own.
func (r *Reconciler) foreignSubscriptions(ctx context.Context, topic, source string) int {
	subs, err := r.subs.Subscriptions(ctx, topic)
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range subs {
		if o, ok := r.subsOf[subKey(s.Topic, s.Name)]; !ok || o.source != source {
			n++
		}
	}
	return n
}

// applyTopic creates or updates the topic en declares, and returns its
// name as stored, or "" when it was already as declared.
func (r *Reconciler) applyTopic(ctx context.Context, source, k string, en entry) (string, error) {
	raw := compact(en.raw)
	o, owned := r.topicsOf[k]
	if owned && o.source != source {
		return "", eventgrid.Errorf(eventgrid.EBadRequest, "The topic %q is declared by %s already; declare it in one place only.", en.name, o.source)
	}
	_, err := r.topics.Topic(ctx, en.name)
	exists := err == nil
	if owned && exists && bytes.Equal(o.raw, raw) {
		return "", nil
	}
	if !owned && exists {
		return "", eventgrid.Errorf(eventgrid.EBadRequest, "The topic %q exists and was created through the management API; the declarative configuration does not change it. Delete it there, or declare another name.", en.name)
	}
	t, err := resource.DecodeTopicProperties(en.raw, "properties", en.name)
	if err != nil {
		return "", err
	}
	if t, _, err = r.topics.PutTopic(ctx, t); err != nil {
		return "", err
	}
	r.topicsOf[k] = &ownedTopic{source: source, name: t.Name, raw: raw}
	return t.Name, nil
}

// applySubscription creates or updates sub, and returns it as stored, or
// nil when it was already as declared.
func (r *Reconciler) applySubscription(ctx context.Context, source string, sub eventgrid.EventSubscription, raw []byte) (*eventgrid.EventSubscription, error) {
	k := subKey(sub.Topic, sub.Name)
	o, owned := r.subsOf[k]
	if owned && o.source != source {
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "The event subscription %q of topic %q is declared by %s already; declare it in one place only.", sub.Name, sub.Topic, o.source)
	}
	cur, err := r.subs.Subscription(ctx, sub.Topic, sub.Name)
	exists := err == nil
	if owned && exists && cur == o.stored && bytes.Equal(o.raw, raw) {
		return nil, nil
	}
	if !owned && exists {
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "The event subscription %q of topic %q exists and was created through the management API; the declarative configuration does not change it. Delete it there, or declare another name.", sub.Name, cur.Topic)
	}
	stored, _, err := r.subs.PutSubscription(ctx, sub)
	if err != nil {
		return nil, err
	}
	r.subsOf[k] = &ownedSub{source: source, topic: stored.Topic, name: stored.Name, raw: raw, stored: stored}
	return stored, nil
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

// Reported returns what the module twin's reported properties say about
// source after an Apply that returned res and err: the topics and event
// subscriptions it owns (names, each topic's input schema, each
// subscription's topic and endpoint type; no other property, so no secret)
// and the errors of the entries skipped, plus the document's own error, if
// any, as errors.desiredProperties. Maps are present even when empty, so
// that a merge patch computed from two of them clears what is gone.
func (r *Reconciler) Reported(ctx context.Context, source string, res Result, err error) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	topics := map[string]any{}
	for _, o := range r.topicsOf {
		if o.source != source {
			continue
		}
		t, err := r.topics.Topic(ctx, o.name)
		if err != nil {
			continue
		}
		topics[o.name] = map[string]any{"inputSchema": string(t.InputSchema)}
	}
	subs := map[string]any{}
	for _, o := range r.subsOf {
		if o.source == source {
			subs[o.name] = map[string]any{"topic": o.topic, "endpointType": string(o.stored.Destination.EndpointType)}
		}
	}
	errs := map[string]any{"topics": stringMap(res.Errors.Topics), "eventSubscriptions": stringMap(res.Errors.EventSubscriptions)}
	if err != nil {
		errs["desiredProperties"] = err.Error()
	}
	return map[string]any{"topics": topics, "eventSubscriptions": subs, "errors": errs}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
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

// Apply applies doc once, as the only source, to a new Reconciler: what a
// start with desired_config does.
func Apply(ctx context.Context, doc []byte, topics eventgrid.TopicService, subs eventgrid.SubscriptionService, log zerolog.Logger) (Result, error) {
	return NewReconciler(topics, subs, log).Apply(ctx, SourceInline, doc)
}
