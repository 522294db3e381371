package resource

import (
	"encoding/json"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// The resource types reported in responses.
const (
	TopicType        = "Microsoft.EventGrid/topics"
	SubscriptionType = "Microsoft.EventGrid/eventSubscriptions"
	// APIVersion is the api-version written into topic endpoints.
	APIVersion = "2019-01-01-preview"
)

// Topic is the response shape of a topic.
type Topic struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Properties TopicProperties `json:"properties"`
}

// TopicProperties holds a topic's properties.
type TopicProperties struct {
	Endpoint    string                `json:"endpoint"`
	InputSchema eventgrid.InputSchema `json:"inputSchema"`
	// ManagedBy names the declaration that manages the topic
	// (eventgrid.Owner.String); absent when the REST API does. Read-only: a
	// PUT ignores it.
	ManagedBy string `json:"managedBy,omitempty"`
	// Stats counts what the topic received (docs/console.md). Read-only:
	// a PUT ignores it.
	Stats *TopicStats `json:"stats,omitempty"`
}

// TopicStats counts a topic's traffic since it was created in this
// process.
type TopicStats struct {
	// Received counts the events accepted on the topic.
	Received int64 `json:"received"`
	// Unmatched counts the accepted events no subscription's filter took.
	Unmatched int64 `json:"unmatched"`
	// PublishRequestsRefused counts the publish requests answered with an
	// error.
	PublishRequestsRefused int64 `json:"publishRequestsRefused"`
	// LastReceivedTime is when the topic last accepted an event, RFC 3339;
	// absent before the first.
	LastReceivedTime string `json:"lastReceivedTime,omitempty"`
}

// NewTopic builds the response for t. idPrefix is
// "/iotHubs/<hub>/devices/<device>/modules/<module>"; baseURL is the
// scheme://host[:port] the client used.
func NewTopic(t eventgrid.Topic, idPrefix, baseURL string) Topic {
	return Topic{
		ID:   idPrefix + "/topics/" + t.Name,
		Name: t.Name,
		Type: TopicType,
		Properties: TopicProperties{
			Endpoint:    baseURL + "/topics/" + t.Name + "/events?api-version=" + APIVersion,
			InputSchema: t.InputSchema,
			ManagedBy:   t.Owner.String(),
		},
	}
}

// Subscription is the response shape of an event subscription.
type Subscription struct {
	ID         string                 `json:"id"`
	Name       string                 `json:"name"`
	Type       string                 `json:"type"`
	Properties SubscriptionProperties `json:"properties"`
}

// SubscriptionProperties holds a subscription's properties. Parts the client
// did not supply are omitted.
type SubscriptionProperties struct {
	Topic string `json:"topic"`
	// ManagedBy names the declaration that manages the subscription
	// (eventgrid.Owner.String); absent when the REST API does. Read-only: a
	// PUT ignores it.
	ManagedBy           string                `json:"managedBy,omitempty"`
	EventDeliverySchema eventgrid.InputSchema `json:"eventDeliverySchema"`
	Destination         Destination           `json:"destination,omitzero"`
	RetryPolicy         *RetryPolicy          `json:"retryPolicy,omitempty"`
	Filter              *Filter               `json:"filter,omitempty"`
	PersistencePolicy   *PersistencePolicy    `json:"persistencePolicy,omitempty"`
	// DeadLetterDestination never carries the connection string, a secret.
	DeadLetterDestination *DeadLetterDestination `json:"deadLetterDestination,omitempty"`
	// DeliveryStatus is an edgegrid extension, read-only: what the broker
	// holds for the subscription right now.
	DeliveryStatus *DeliveryStatus `json:"deliveryStatus,omitempty"`

	// DeliveryConfiguration is set for a queue subscription, which has no
	// destination.
	DeliveryConfiguration *DeliveryConfiguration `json:"deliveryConfiguration,omitempty"`
}

// DeliveryStatus describes a subscription's queue (an edgegrid extension of
// the subscription resource, docs/console.md#delivery-status; it is ignored
// on input). Times are RFC 3339 in UTC, left out when they do not apply.
type DeliveryStatus struct {
	// State sums the rest up: one of the State* constants.
	State string `json:"state"`
	// Ready events wait for an attempt now; InBackoff wait for their next
	// attempt (the 1-minute and 10-minute back-off lists, or the
	// CloudExponential schedule); InFlight requests are being delivered, of
	// at most ConcurrencyLimit now.
	Ready            int `json:"ready"`
	InBackoff        int `json:"inBackoff"`
	InFlight         int `json:"inFlight"`
	ConcurrencyLimit int `json:"concurrencyLimit"`
	DeliveryTotals
	// LastFailureTime, LastFailureStatusCode (when the destination
	// answered one) and LastError describe the most recent failed attempt.
	LastFailureTime       string `json:"lastFailureTime,omitempty"`
	LastFailureStatusCode int    `json:"lastFailureStatusCode,omitempty"`
	LastError             string `json:"lastError,omitempty"`
	// NextAttemptTime is when the earliest event in back-off is due;
	// OldestQueuedTime when the broker accepted the oldest event held.
	NextAttemptTime  string `json:"nextAttemptTime,omitempty"`
	OldestQueuedTime string `json:"oldestQueuedTime,omitempty"`
	// ProbationUntil is when the subscription's probation ends
	// (docs/design.md#probation), only
	// while it is on probation.
	ProbationUntil string `json:"probationUntil,omitempty"`
	// PausedSince is when the subscription's delivery was paused
	// (docs/delivery.md#pause-and-resume), only while it is paused.
	PausedSince string `json:"pausedSince,omitempty"`
	// Queue, when set, replaces all of the above with a queue
	// subscription's status.
	Queue *QueueStatus `json:"-"`
}

// The states of a deliveryStatus, the first that holds
// (docs/console.md#delivery-status).
const (
	StatePaused      = "Paused"
	StateNoReceiver  = "NoReceiver"
	StateOnProbation = "OnProbation"
	StateFailing     = "Failing"
	StateRetrying    = "Retrying"
	StateDelivering  = "Delivering"
	StateIdle        = "Idle"
)

// DeliveryTotals are a subscription's counts since it was created in this
// process, push and queue alike.
type DeliveryTotals struct {
	Delivered       int64  `json:"delivered"`
	FailedAttempts  int64  `json:"failedAttempts"`
	DeadLettered    int64  `json:"deadLettered"`
	Dropped         int64  `json:"dropped"`
	LastSuccessTime string `json:"lastSuccessTime,omitempty"`
}

// Destination is the response shape of a destination. Its secrets are
// never returned (docs/api.md#secrets): not the EventGrid destination's
// sasKey, nor a signing secret, nor a connection string, nor a URL's query.
type Destination struct {
	EndpointType eventgrid.EndpointType `json:"endpointType"`
	Properties   DestinationProperties  `json:"properties"`
}

// DestinationProperties holds a destination's properties.
type DestinationProperties struct {
	// EndpointURL is the URL when no part of it may hold a secret; else
	// EndpointBaseURL is the URL without its query, user information and
	// fragment, and getFullUrl reads the whole (docs/api.md#secrets).
	EndpointURL     string `json:"endpointUrl,omitempty"`
	EndpointBaseURL string `json:"endpointBaseUrl,omitempty"`
	TopicName       string `json:"topicName,omitempty"`
	OutputName      string `json:"outputName,omitempty"`
	// Namespace and EntityPath are the Event Hubs or Service Bus entity the
	// connection string names; AccountName and QueueEndpoint the storage
	// account and queue service of a StorageQueue's. They stand for the
	// connection string, a secret, which is never returned.
	Namespace     string `json:"namespace,omitempty"`
	EntityPath    string `json:"entityPath,omitempty"`
	AccountName   string `json:"accountName,omitempty"`
	QueueEndpoint string `json:"queueEndpoint,omitempty"`
	// QueueName and QueueMessageTimeToLiveInSeconds are StorageQueue's.
	QueueName                       string `json:"queueName,omitempty"`
	QueueMessageTimeToLiveInSeconds int    `json:"queueMessageTimeToLiveInSeconds,omitempty"`
	MaxEventsPerBatch               int    `json:"maxEventsPerBatch,omitempty"`
	PreferredBatchSizeInKilobytes   int    `json:"preferredBatchSizeInKilobytes,omitempty"`
	// ContentMode and Validation are edgegrid extensions
	// (docs/design.md#webhook-interop); the
	// signingSecret is a secret and is never returned.
	ContentMode eventgrid.ContentMode    `json:"contentMode,omitempty"`
	Validation  eventgrid.ValidationMode `json:"validation,omitempty"`
	// DeliveryAttributeMappings are the custom headers
	// (docs/design.md#custom-delivery-properties); secret values
	// are never returned.
	DeliveryAttributeMappings []DeliveryAttribute `json:"deliveryAttributeMappings,omitempty"`
}

// RetryPolicy is the response shape of a retry policy.
type RetryPolicy struct {
	MaxDeliveryAttempts  int    `json:"maxDeliveryAttempts,omitempty"`
	EventExpiryInMinutes int    `json:"eventExpiryInMinutes,omitempty"`
	Schedule             string `json:"schedule,omitempty"`
}

// PersistencePolicy is the response shape of a persistence policy.
type PersistencePolicy struct {
	IsPersisted bool `json:"isPersisted"`
}

// Filter is the response shape of a filter.
type Filter struct {
	IncludedEventTypes     []string         `json:"includedEventTypes,omitempty"`
	SubjectBeginsWith      string           `json:"subjectBeginsWith,omitempty"`
	SubjectEndsWith        string           `json:"subjectEndsWith,omitempty"`
	IsSubjectCaseSensitive bool             `json:"isSubjectCaseSensitive"`
	AdvancedFilters        []AdvancedFilter `json:"advancedFilters,omitempty"`
	// EnableAdvancedFilteringOnArrays is returned only when set, so that a
	// subscription written for the edge module reads back as it was.
	EnableAdvancedFilteringOnArrays bool `json:"enableAdvancedFilteringOnArrays,omitempty"`
}

// AdvancedFilter is the response shape of an advanced filter; Value and
// Values are the literals the client sent.
type AdvancedFilter struct {
	OperatorType string            `json:"operatorType"`
	Key          string            `json:"key"`
	Value        json.RawMessage   `json:"value,omitempty"`
	Values       []json.RawMessage `json:"values,omitempty"`
}

// NewSubscription builds the response for s; idPrefix as for NewTopic.
func NewSubscription(s *eventgrid.EventSubscription, idPrefix string) Subscription {
	r := Subscription{
		ID:   idPrefix + "/topics/" + s.Topic + "/eventSubscriptions/" + s.Name,
		Name: s.Name,
		Type: SubscriptionType,
		Properties: SubscriptionProperties{
			Topic:               s.Topic,
			ManagedBy:           s.Owner.String(),
			EventDeliverySchema: s.EventDeliverySchema,
			Destination:         newDestination(s.Destination),
		},
	}
	if p := s.RetryPolicy; p != nil {
		r.Properties.RetryPolicy = &RetryPolicy{MaxDeliveryAttempts: p.MaxDeliveryAttempts, EventExpiryInMinutes: p.EventExpiryInMinutes, Schedule: string(p.Schedule)}
	}
	if p := s.PersistencePolicy; p != nil {
		r.Properties.PersistencePolicy = &PersistencePolicy{IsPersisted: p.IsPersisted}
	}
	if d := s.DeadLetter; d != nil {
		r.Properties.DeadLetterDestination = newDeadLetterDestination(d)
	}
	if f := s.Filter; f != nil {
		rf := &Filter{
			IncludedEventTypes:     f.IncludedEventTypes,
			SubjectBeginsWith:      f.SubjectBeginsWith,
			SubjectEndsWith:        f.SubjectEndsWith,
			IsSubjectCaseSensitive: f.IsSubjectCaseSensitive,

			EnableAdvancedFilteringOnArrays: f.EnableAdvancedFilteringOnArrays,
		}
		for _, a := range f.AdvancedFilters {
			rf.AdvancedFilters = append(rf.AdvancedFilters, AdvancedFilter{OperatorType: a.OperatorType, Key: a.Key, Value: a.Value, Values: a.Values})
		}
		r.Properties.Filter = rf
	}
	if s.Queue != nil {
		// The dead-letter destination is shown where it was given, in
		// deliveryConfiguration.queue.
		r.Properties.Destination = Destination{}
		r.Properties.DeliveryConfiguration = newDeliveryConfiguration(s)
		r.Properties.DeadLetterDestination = nil
	}
	return r
}

// DeadLetterDestination is the response shape of a dead-letter destination.
type DeadLetterDestination struct {
	EndpointType eventgrid.EndpointType `json:"endpointType"`
	Properties   struct {
		BlobContainerName string `json:"blobContainerName"`
		// AccountName and BlobEndpoint are the storage account and blob
		// service the connection string names; they stand for it, a
		// secret, which is never returned.
		AccountName  string `json:"accountName,omitempty"`
		BlobEndpoint string `json:"blobEndpoint,omitempty"`
	} `json:"properties"`
}

// newDestination builds the response shape of d, without its secrets.
func newDestination(d eventgrid.Destination) Destination {
	p := DestinationProperties{
		TopicName:                     d.TopicName,
		OutputName:                    d.OutputName,
		QueueName:                     d.QueueName,
		MaxEventsPerBatch:             d.MaxEventsPerBatch,
		PreferredBatchSizeInKilobytes: d.PreferredBatchSizeInKilobytes,
		ContentMode:                   d.ContentMode,
		Validation:                    d.Validation,
		DeliveryAttributeMappings:     encodeDeliveryAttributes(d.DeliveryAttributes),
	}
	if ttl := d.QueueMessageTTLSeconds; ttl != nil {
		p.QueueMessageTimeToLiveInSeconds = *ttl
	}
	if base := EndpointBaseURL(d.EndpointURL); base == d.EndpointURL {
		p.EndpointURL = d.EndpointURL
	} else {
		p.EndpointBaseURL = base
	}
	t := destinationTarget(d)
	p.Namespace, p.EntityPath = t["namespace"], t["entityPath"]
	p.AccountName, p.QueueEndpoint = t["accountName"], t["queueEndpoint"]
	return Destination{EndpointType: d.EndpointType, Properties: p}
}

// newDeadLetterDestination builds the response shape of d, without its
// connection string.
func newDeadLetterDestination(d *eventgrid.DeadLetterDestination) *DeadLetterDestination {
	r := &DeadLetterDestination{EndpointType: d.EndpointType}
	r.Properties.BlobContainerName = d.ContainerName
	t := storageTarget(d.ConnectionString, "blob")
	r.Properties.AccountName, r.Properties.BlobEndpoint = t["accountName"], t["blobEndpoint"]
	return r
}
