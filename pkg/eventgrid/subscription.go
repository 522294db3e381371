package eventgrid

import (
	"context"
	"encoding/json"
	"strings"
)

// EndpointType names the kind of destination a subscription delivers to.
type EndpointType string

// The destination types edgegrid delivers to.
const (
	WebHook   EndpointType = "WebHook"
	EventGrid EndpointType = "EventGrid"
)

// KnownEndpointTypes maps the lower-cased names of every destination type of
// the original module to its canonical spelling, including the ones edgegrid
// does not deliver to yet, so that they can be refused by name.
var KnownEndpointTypes = map[string]EndpointType{
	"webhook":         WebHook,
	"eventgrid":       EventGrid,
	"edgehub":         "EdgeHub",
	"eventhub":        "EventHub",
	"servicebusqueue": "ServiceBusQueue",
	"servicebustopic": "ServiceBusTopic",
	"storagequeue":    "StorageQueue",
}

// ParseEndpointType returns the canonical spelling of an endpoint type,
// matched case-insensitively, and whether edgegrid knows the name at all.
func ParseEndpointType(s string) (EndpointType, bool) {
	t, ok := KnownEndpointTypes[strings.ToLower(strings.TrimSpace(s))]
	return t, ok
}

// EventSubscription routes a topic's events to one destination.
type EventSubscription struct {
	// UID identifies one lifetime of the subscription: it is assigned when the
	// subscription is created and kept across updates, so a subscription that
	// is deleted and created again under the same name gets a new UID.
	UID uint64
	// Topic and Name keep the casing they were created with.
	Topic               string
	Name                string
	EventDeliverySchema InputSchema
	Destination         Destination
	// RetryPolicy, Filter and PersistencePolicy are nil when the client did
	// not supply them; the API echoes only what was supplied.
	RetryPolicy       *RetryPolicy
	Filter            *Filter
	PersistencePolicy *PersistencePolicy
}

// Destination says where and how a subscription's events are delivered.
type Destination struct {
	EndpointType EndpointType
	EndpointURL  string
	// SASKey is the key sent in aeg-sas-key to an EventGrid destination. It is
	// a secret: never logged, never returned by the API.
	SASKey string
	// TopicName replaces the topic of EventGridSchema events forwarded to an
	// EventGrid destination; empty means the topic is sent as null.
	TopicName string
	// MaxEventsPerBatch and PreferredBatchSizeInKilobytes turn output batching
	// on when either is non-zero; zero means not set.
	MaxEventsPerBatch             int
	PreferredBatchSizeInKilobytes int
}

// Batching reports whether the destination asked for output batching.
func (d Destination) Batching() bool {
	return d.MaxEventsPerBatch > 0 || d.PreferredBatchSizeInKilobytes > 0
}

// RetryPolicy overrides the module's delivery limits for one subscription.
// A zero field means not set: the module default applies.
type RetryPolicy struct {
	MaxDeliveryAttempts  int
	EventExpiryInMinutes int
}

// PersistencePolicy is accepted for compatibility. edgegrid keeps events in
// memory by design, so IsPersisted is always false once validated.
type PersistencePolicy struct {
	IsPersisted bool
}

// Filter selects which of a topic's events a subscription receives. All parts
// that are set must match.
type Filter struct {
	IncludedEventTypes     []string
	SubjectBeginsWith      string
	SubjectEndsWith        string
	IsSubjectCaseSensitive bool
	AdvancedFilters        []AdvancedFilter
}

// AdvancedFilter compares the value at Key with Value (single-value
// operators) or Values (multi-value operators). Value and Values hold JSON
// literals exactly as the client wrote them, so numbers keep their text.
type AdvancedFilter struct {
	OperatorType string
	Key          string
	Value        json.RawMessage
	Values       []json.RawMessage
}

// SubscriptionService manages event subscriptions. Implementations are safe
// for concurrent use.
type SubscriptionService interface {
	// PutSubscription creates or updates a subscription of an existing topic.
	// It returns ETopicNotFound if the topic does not exist and a validation
	// code (EInvalidDestination, EInvalidFilter, …) if sub is not acceptable.
	PutSubscription(ctx context.Context, sub EventSubscription) (stored *EventSubscription, created bool, err error)
	// Subscription returns ETopicNotFound or ESubscriptionMissing if either
	// does not exist.
	Subscription(ctx context.Context, topic, name string) (*EventSubscription, error)
	// Subscriptions returns the topic's subscriptions ordered by name, or
	// ETopicNotFound.
	Subscriptions(ctx context.Context, topic string) ([]*EventSubscription, error)
	// DeleteSubscription returns ETopicNotFound or ESubscriptionMissing if
	// either does not exist.
	DeleteSubscription(ctx context.Context, topic, name string) error
}

// SubscriptionObserver is told about every change to the set of
// subscriptions, in the order the changes happen. The delivery engine
// implements it to create, reconfigure and discard its queues. Calls must not
// block and must not call back into the SubscriptionService.
type SubscriptionObserver interface {
	// SubscriptionPut is called after a subscription is created or updated;
	// an update keeps the UID.
	SubscriptionPut(sub *EventSubscription)
	// SubscriptionDeleted is called after a subscription is deleted, directly
	// or with its topic.
	SubscriptionDeleted(sub *EventSubscription)
}
