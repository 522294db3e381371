package eventgrid

import "context"

// Topic is a named channel that accepts events in one schema.
type Topic struct {
	// Name keeps the casing it was created with; lookups ignore case.
	Name        string
	InputSchema InputSchema
	// Owner manages the topic: the zero Owner is the REST API.
	Owner Owner
}

// TopicService manages topics. Implementations are safe for concurrent use.
type TopicService interface {
	// PutTopic creates the topic or updates it in place and returns the stored
	// topic and whether it was created. It returns EInvalidSchema when the
	// input schema changes while the topic has subscriptions,
	// ELimitExceeded when the module holds its maximum number of topics and
	// EConflict when the topic exists with another Owner than t's.
	PutTopic(ctx context.Context, t Topic) (stored Topic, created bool, err error)
	// Topic returns ETopicNotFound if the topic does not exist.
	Topic(ctx context.Context, name string) (Topic, error)
	// Topics returns every topic, ordered by name.
	Topics(ctx context.Context) ([]Topic, error)
	// DeleteTopic deletes the topic and all of its subscriptions, for the
	// REST API. It returns ETopicNotFound if the topic does not exist and
	// EConflict if the topic or one of its subscriptions is declared.
	DeleteTopic(ctx context.Context, name string) error
}

// TopicObserver is told when topics are created and deleted. The registry
// tells its observer when the observer implements it too, after the
// subscriptions of a deleted topic, under the registry's lock: the observer
// must not call back into the registry.
type TopicObserver interface {
	TopicCreated(t Topic)
	TopicDeleted(t Topic)
}
