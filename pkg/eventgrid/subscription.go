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
	WebHook         EndpointType = "WebHook"
	EventGrid       EndpointType = "EventGrid"
	EdgeHub         EndpointType = "EdgeHub"
	EventHub        EndpointType = "EventHub"
	ServiceBusQueue EndpointType = "ServiceBusQueue"
	ServiceBusTopic EndpointType = "ServiceBusTopic"
	StorageQueue    EndpointType = "StorageQueue"
	// StorageBlob is a dead-letter destination only.
	StorageBlob EndpointType = "StorageBlob"
)

// KnownEndpointTypes maps the lower-cased names of every destination type of
// the original module to its canonical spelling, including the ones edgegrid
// does not deliver to yet, so that they can be refused by name.
var KnownEndpointTypes = map[string]EndpointType{
	"webhook":         WebHook,
	"eventgrid":       EventGrid,
	"edgehub":         EdgeHub,
	"eventhub":        EventHub,
	"servicebusqueue": ServiceBusQueue,
	"servicebustopic": ServiceBusTopic,
	"storagequeue":    StorageQueue,
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
	// DeadLetter, when not nil, receives the events the retry policy gives
	// up on instead of dropping them (an edgegrid extension,
	// docs/design.md#dead-lettering).
	DeadLetter *DeadLetterDestination
	// Queue, when not nil, makes this a queue subscription: events wait for
	// an application to receive them, and Destination is empty.
	Queue *QueueConfig
	// Owner manages the subscription: the zero Owner is the REST API.
	Owner Owner
	// Paused is what a declaration states of the subscription's delivery
	// ("paused": true, docs/live-config.md): the delivery modes pause a
	// declared subscription as its declaration says, each time it is put.
	// A subscription the REST API manages is paused and resumed with the
	// :pause and :resume actions instead, and this stays false.
	Paused bool
}

// DeadLetterDestination is a blob container that keeps undeliverable events.
type DeadLetterDestination struct {
	// EndpointType is StorageBlob, the only kind there is.
	EndpointType  EndpointType
	ContainerName string
	// ConnectionString is the storage account's. It is a secret: never
	// logged, never returned by the API, never in an error text.
	ConnectionString string
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

	// ContentMode says how CloudEvents travel to a WebHook
	// (docs/design.md#content-modes); empty
	// means Batch.
	ContentMode ContentMode
	// Validation is the handshake made at PUT
	// (docs/design.md#validation-handshakes); empty means None.
	Validation ValidationMode
	// SigningSecrets, when set, sign every WebHook delivery the Standard
	// Webhooks way (docs/design.md#signatures), one signature per secret. Secrets: never logged,
	// never returned by the API.
	SigningSecrets []string
	// DeliveryAttributes are the custom headers or message properties sent
	// with every delivery (docs/design.md#custom-delivery-properties).
	DeliveryAttributes []DeliveryAttribute

	// OutputName is the EdgeHub module output events are sent on.
	OutputName string
	// ConnectionString is the StorageQueue account's, or the EventHub or
	// Service Bus entity's. It is a secret: never logged, never returned.
	ConnectionString string
	// QueueName is the StorageQueue queue.
	QueueName string
	// QueueMessageTTLSeconds is a StorageQueue message's time to live in
	// seconds, -1 for never; nil means not set (the service's default).
	QueueMessageTTLSeconds *int
}

// ContentMode is how a WebHook receives events (docs/design.md#content-modes).
type ContentMode string

// The content modes.
const (
	// ContentBatch: a JSON array per request (the edge module's way).
	ContentBatch ContentMode = "Batch"
	// ContentStructured: one event per request as a JSON object.
	ContentStructured ContentMode = "Structured"
	// ContentBinary: one CloudEvent per request, attributes in ce-* headers.
	ContentBinary ContentMode = "Binary"
)

// ValidationMode is the endpoint handshake made when a subscription is put.
type ValidationMode string

// The validation handshakes.
const (
	ValidationNone        ValidationMode = "None"
	ValidationEventGrid   ValidationMode = "EventGrid"
	ValidationCloudEvents ValidationMode = "CloudEvents"
)

// DeliveryAttribute is one custom delivery property
// (docs/design.md#custom-delivery-properties): a header for
// WebHook and EventGrid destinations, a message property for Event Hubs and
// Service Bus.
type DeliveryAttribute struct {
	Name string
	// Type is "Static" (Value is sent) or "Dynamic" (the value at
	// SourceField of the event, when it is a string, number or boolean).
	Type        string
	Value       string
	IsSecret    bool
	SourceField string
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
	// Schedule picks the delivery profile (docs/design.md#delivery-profiles);
	// empty means the module's
	// default.
	Schedule RetrySchedule
}

// RetrySchedule names a delivery profile (docs/design.md#delivery-profiles).
type RetrySchedule string

// The delivery profiles.
const (
	// EdgeQueues: an immediate attempt, then the two fixed back-off queues;
	// every failure retries (the edge module's behaviour).
	EdgeQueues RetrySchedule = "EdgeQueues"
	// CloudExponential: cloud Event Grid's exponential schedule, status
	// classes and probation.
	CloudExponential RetrySchedule = "CloudExponential"
)

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
	// EnableAdvancedFilteringOnArrays lets an array value match when any
	// of its elements does (docs/design.md#newer-filter-operators); otherwise
	// arrays never match.
	EnableAdvancedFilteringOnArrays bool
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
	// It returns ETopicNotFound if the topic does not exist, a validation
	// code (EInvalidDestination, EInvalidFilter, …) if sub is not acceptable
	// and EConflict if it exists with another Owner than sub's.
	PutSubscription(ctx context.Context, sub EventSubscription) (stored *EventSubscription, created bool, err error)
	// Subscription returns ETopicNotFound or ESubscriptionMissing if either
	// does not exist.
	Subscription(ctx context.Context, topic, name string) (*EventSubscription, error)
	// Subscriptions returns the topic's subscriptions ordered by name, or
	// ETopicNotFound.
	Subscriptions(ctx context.Context, topic string) ([]*EventSubscription, error)
	// DeleteSubscription deletes a subscription for the REST API. It
	// returns ETopicNotFound or ESubscriptionMissing if either does not
	// exist, and EConflict if the subscription is declared.
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

// SubscriptionGuard is implemented by a SubscriptionObserver that can
// refuse a change of a subscription before it is made: the registry asks it
// before it replaces old with sub (same UID), with its lock held, and
// answers the error instead of making the change. It must not block and
// must not call back into the SubscriptionService. A change refused
// because it would discard events gets EEventsHeld, saying how many.
type SubscriptionGuard interface {
	CheckSubscriptionPut(old, sub *EventSubscription) error
}

// EventHolder is implemented by what holds subscriptions' events: HeldEvents
// is how many of sub's events it holds, all of which SubscriptionDeleted
// would discard.
type EventHolder interface {
	HeldEvents(sub *EventSubscription) int
}
