package mock

import (
	"context"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// EventPublisher is a function-field fake of the publish path the API
// calls (api.Publisher): TopicFn names the topic a request publishes to,
// and PublishFn takes its decoded events. Both must be set for the calls
// a test makes; EventPublisher is as safe for concurrent use as they are.
type EventPublisher struct {
	TopicFn   func(name string) (eventgrid.Topic, eventgrid.Subscribers, error)
	PublishFn func(ctx context.Context, topic eventgrid.Topic, events []*eventgrid.Event) (unmatched int, err error)
}

// Topic calls TopicFn.
func (p *EventPublisher) Topic(name string) (eventgrid.Topic, eventgrid.Subscribers, error) {
	return p.TopicFn(name)
}

// Publish calls PublishFn.
func (p *EventPublisher) Publish(ctx context.Context, topic eventgrid.Topic, events []*eventgrid.Event) (int, error) {
	return p.PublishFn(ctx, topic, events)
}
