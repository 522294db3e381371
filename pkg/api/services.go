package api

import (
	"context"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// Resources are the topics and event subscriptions the management routes
// manage: the registry.
type Resources interface {
	eventgrid.TopicService
	eventgrid.SubscriptionService
}

// Publisher takes the events of publish requests: the registry's router,
// in front of the broker's dispatcher.
type Publisher interface {
	// Topic returns the topic name publishes to and what its
	// subscriptions ask of the publish path, or ETopicNotFound.
	Topic(name string) (eventgrid.Topic, eventgrid.Subscribers, error)
	// Publish queues events for the subscriptions of topic they match, all
	// or nothing: it returns EQueueFull when the broker cannot hold them
	// now (after holding them for room a little, until ctx is done) and
	// EPayloadTooLarge when it never could. It returns how many
	// events matched no subscription. Events built as their CloudEvents
	// (eventgrid.Subscribers.CloudEventsOnly) that a subscription now needs
	// as published, it restores first. It may keep the events' bodies, but
	// not the Event structs nor the slice.
	Publish(ctx context.Context, topic eventgrid.Topic, events []*eventgrid.Event) (unmatched int, err error)
}

// Admitter tells, before a publish body is read, whether a request of
// about bytes bytes could be held (the dispatcher, over the broker's
// budget): nil when it could, EQueueFull when it could not now, and
// EPayloadTooLarge when it never could, however empty the broker. While
// the broker is full it may hold the request for room, as Publish may
// (docs/delivery.md#bounded-queues), until ctx is done.
type Admitter interface {
	Admit(ctx context.Context, bytes int64) error
}

// Status reports what a subscription's delivery mode holds of it now (the
// dispatcher), for its deliveryStatus; ok is false when there is nothing
// to report.
type Status interface {
	Status(sub *eventgrid.EventSubscription) (st inspect.Status, ok bool)
}

// Board is the inspection board (package inspect): the record of each
// topic, by the name it was created with, and of each subscription, by
// UID; nil when there is none.
type Board interface {
	Topic(name string) *inspect.Topic
	Subscription(uid uint64) *inspect.Sub
}

// Held peeks at and moves the events subscriptions hold, whatever their
// delivery mode (the dispatcher): the inspection API's peek and the
// operator's actions (docs/api.md#actions). ok is false when the
// subscription's mode has no queue for it.
type Held interface {
	Peek(sub *eventgrid.EventSubscription, top int) (p inspect.Peek, ok bool)
	// RetryNow makes the events waiting to be retried ready, and says how
	// many, and how many of them were at their last attempt.
	RetryNow(sub *eventgrid.EventSubscription) (moved, atLast int, ok bool)
	// Pause pauses or resumes the subscription, and says since when it is
	// paused (zero once resumed).
	Pause(sub *eventgrid.EventSubscription, paused bool) (since time.Time, ok bool)
	// Purge drops the events waiting (not in flight or locked) and says
	// how many.
	Purge(sub *eventgrid.EventSubscription) (purged int, ok bool)
	// Redrive queues bodies for the subscription alone, as newly
	// accepted, within the budget as Publisher.Publish does: all or none.
	Redrive(ctx context.Context, sub *eventgrid.EventSubscription, bodies [][]byte) error
}

// Queues serves the receive and the settlements of queue subscriptions
// (the queue store); see docs/pull-delivery.md.
type Queues interface {
	Receive(ctx context.Context, sub *eventgrid.EventSubscription, max int, wait time.Duration) ([]queue.Received, error)
	Acknowledge(sub *eventgrid.EventSubscription, tokens []string) (queue.Result, error)
	Release(sub *eventgrid.EventSubscription, tokens []string, delay time.Duration) (queue.Result, error)
	Reject(sub *eventgrid.EventSubscription, tokens []string) (queue.Result, error)
	RenewLocks(sub *eventgrid.EventSubscription, tokens []string) (queue.Result, error)
}
