package desired

import (
	"maps"
	"slices"
	"strings"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Result says what one Apply did.
type Result struct {
	// Topics and Subscriptions list what was created or updated, with the
	// names as stored, in the order applied; DeletedTopics and
	// DeletedSubscriptions what was deleted because the source no longer
	// declares it there (a subscription moved to another topic is in both).
	Topics               []string
	DeletedTopics        []string
	Subscriptions        []SubscriptionName
	DeletedSubscriptions []SubscriptionName
	// Unchanged counts the declared entries that were already applied as
	// declared, and so were left alone.
	Unchanged int
	// Errors holds one message per skipped entry.
	Errors Errors

	// passing names the skipped entries that failed for a passing reason.
	passing []string
	// waiting names the skipped entries refused because the REST API
	// manages their names.
	waiting []heldName
}

// heldName is a topic's or an event subscription's name, lower-cased,
// that the REST API manages.
type heldName struct {
	topic bool
	name  string
}

// Changed reports whether the Apply created, updated or deleted anything.
func (r Result) Changed() bool {
	return len(r.Topics)+len(r.DeletedTopics)+len(r.Subscriptions)+len(r.DeletedSubscriptions) > 0
}

// Retrying reports whether entries failed for a passing reason, so that
// the source is applied again after a back-off.
func (r Result) Retrying() bool { return len(r.passing) > 0 }

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

func sameErrors(a, b Errors) bool {
	return maps.Equal(a.Topics, b.Topics) && maps.Equal(a.EventSubscriptions, b.EventSubscriptions)
}

// SourceStatus is what /readyz shows of one source of declared
// configuration.
type SourceStatus struct {
	Source string `json:"source"`
	File   string `json:"file,omitempty"`
	// Applied is true once the source's first declaration was applied.
	Applied bool `json:"applied"`
	// Error says why the last document could not be applied at all.
	Error string `json:"error,omitempty"`
	// Skipped holds the entries the last apply skipped, with their errors.
	Skipped *Errors `json:"skipped,omitempty"`
	// NextRetry is when the source is applied again for the entries that
	// failed for a passing reason (RFC 3339), if any did.
	NextRetry string `json:"nextRetry,omitempty"`
}

// Status returns the status of each source that has been applied, in the
// order of their names. It never waits for an apply in progress.
func (r *Reconciler) Status() []SourceStatus {
	r.smu.Lock()
	defer r.smu.Unlock()
	out := make([]SourceStatus, 0, len(r.status))
	for _, s := range r.status {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b SourceStatus) int {
		return strings.Compare(a.Source+a.File, b.Source+b.File)
	})
	return out
}

// logResult warns about each skipped entry, unless the last Apply of
// owner warned about it with the same message, and sums up.
func (r *Reconciler) logResult(log zerolog.Logger, owner eventgrid.Owner, res Result) {
	last := r.lastErrs[owner]
	retried := func(name string) bool { return slices.Contains(res.passing, name) }
	for _, name := range slices.Sorted(maps.Keys(res.Errors.Topics)) {
		if msg := res.Errors.Topics[name]; last.Topics[name] != msg {
			log.Warn().Str("topic", name).Str("error", msg).Bool("retried", retried(name)).Msg("declared topic skipped")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(res.Errors.EventSubscriptions)) {
		if msg := res.Errors.EventSubscriptions[name]; last.EventSubscriptions[name] != msg {
			log.Warn().Str("subscription", name).Str("error", msg).Bool("retried", retried(name)).Msg("declared event subscription skipped")
		}
	}
	r.lastErrs[owner] = res.Errors
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

// Reported returns what the module twin's reported properties say about
// owner after an Apply that returned res and err: the topics and event
// subscriptions it owns (names, each topic's input schema, each
// subscription's topic and endpoint type, or deliveryMode Queue; no other
// property, so no secret) and the errors of the entries skipped, plus the
// document's own error, if any, as errors.desiredProperties. Maps are
// present even when empty, so that a merge patch computed from two of them
// clears what is gone.
func (r *Reconciler) Reported(owner eventgrid.Owner, res Result, err error) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stateOf(owner)
	topics := map[string]any{}
	for _, o := range st.topics {
		topics[o.name] = map[string]any{"inputSchema": string(o.schema)}
	}
	subs := map[string]any{}
	for _, o := range st.subs {
		if o.queue {
			subs[o.name] = map[string]any{"topic": o.topic, "deliveryMode": "Queue"}
		} else {
			subs[o.name] = map[string]any{"topic": o.topic, "endpointType": string(o.endpointType)}
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
