package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// TestRouter: the router names a publish's topic, matches its events
// against the subscriptions the topic has, hands the matches on as one
// publication counting every event's bytes, and passes a refusal back.
func TestRouter(t *testing.T) {
	ctx := context.Background()
	reg, rec, r := newRouter()
	if _, _, err := reg.PutTopic(ctx, eventgrid.Topic{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	topic, subs, err := r.Topic("T")
	if err != nil || topic.Name != "t" || subs.Any || subs.CloudEventsOnly {
		t.Fatalf("Topic = %+v, %+v, %v; want t without subscriptions", topic, subs, err)
	}
	if _, _, err := reg.PutSubscription(ctx, eventgrid.EventSubscription{Topic: "t", Name: "a",
		Filter:      &eventgrid.Filter{SubjectBeginsWith: "/a"},
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}}); err != nil {
		t.Fatal(err)
	}
	if _, subs, _ = r.Topic("t"); !subs.Any || subs.CloudEventsOnly {
		t.Fatalf("Topic: a topic with a subscription that takes EventGridSchema: %+v", subs)
	}
	events := []*eventgrid.Event{
		{ID: "1", Subject: "/a/1", HasSubject: true, Body: []byte(`{"id":"1"}`)},
		{ID: "2", Subject: "/b/2", HasSubject: true, Body: []byte(`{"id":"2","x":1}`)},
	}
	unmatched, err := r.Publish(ctx, topic, events)
	if err != nil || unmatched != 1 {
		t.Fatalf("Publish = %d, %v; want 1 unmatched", unmatched, err)
	}
	calls := rec.Calls()
	if len(calls) != 1 || len(calls[0].Deliveries) != 1 || calls[0].Deliveries[0].Event.ID != "1" || calls[0].Size != 10+16 {
		t.Fatalf("handed on %+v; want event 1 alone, and the size of both", calls)
	}
	if unmatched, err := r.Publish(ctx, topic, events[1:]); err != nil || unmatched != 1 || len(rec.Calls()) != 1 {
		t.Fatalf("nothing matched: %d, %v, %d calls; want nothing handed on", unmatched, err, len(rec.Calls()))
	}
	rec.SetError(mock.QueueFull())
	if _, err := r.Publish(ctx, topic, events); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		t.Fatalf("Publish into a full broker = %v; want its EQueueFull", err)
	}
	if err := reg.DeleteTopic(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Publish(ctx, topic, events); eventgrid.ErrorCode(err) != eventgrid.ETopicNotFound {
		t.Fatalf("Publish to a deleted topic = %v; want ETopicNotFound", err)
	}
}

// TestRouter_CloudEventsOnly: an EventGridSchema topic whose every
// subscription takes CloudEvents, with filters on the event's type and
// subject only, has its events built as their CloudEvents; one subscription
// that takes the events as published, or whose advanced filter reads the
// body, ends that. Events built so are refused, with nothing handed on,
// once the subscriptions no longer allow them, and taken while they do.
func TestRouter_CloudEventsOnly(t *testing.T) {
	ctx := context.Background()
	reg, rec, r := newRouter()
	for _, topic := range []eventgrid.Topic{
		{Name: "eg", InputSchema: eventgrid.EventGridSchema},
		{Name: "ce", InputSchema: eventgrid.CloudEventSchemaV1_0},
	} {
		if _, _, err := reg.PutTopic(ctx, topic); err != nil {
			t.Fatal(err)
		}
	}
	put := func(topic, name string, schema eventgrid.InputSchema, f *eventgrid.Filter) {
		t.Helper()
		if _, _, err := reg.PutSubscription(ctx, eventgrid.EventSubscription{Topic: topic, Name: name,
			EventDeliverySchema: schema, Filter: f,
			Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}}); err != nil {
			t.Fatal(err)
		}
	}
	only := func(topic string) bool {
		t.Helper()
		_, subs, err := r.Topic(topic)
		if err != nil || !subs.Any {
			t.Fatalf("Topic(%s) = %+v, %v", topic, subs, err)
		}
		return subs.CloudEventsOnly
	}
	converted := []*eventgrid.Event{
		{ID: "1", Type: "T", Subject: "/1", HasSubject: true, Body: []byte(`{"id":"1"}`)},
		{ID: "2", Type: "T", Subject: "/2", HasSubject: true, Converted: true, Body: []byte(`{"specversion":"1.0","id":"2"}`)},
	}
	egTopic := eventgrid.Topic{Name: "eg", InputSchema: eventgrid.EventGridSchema}

	put("eg", "a", eventgrid.CloudEventSchemaV1_0, &eventgrid.Filter{IncludedEventTypes: []string{"T"}, SubjectBeginsWith: "/"})
	put("ce", "a", eventgrid.CloudEventSchemaV1_0, nil)
	if !only("eg") || only("ce") {
		t.Fatalf("CloudEventsOnly: EventGridSchema topic %v, CloudEvents topic %v; want true, false", only("eg"), only("ce"))
	}
	if _, err := r.Publish(ctx, egTopic, converted); err != nil || len(rec.Calls()) != 1 {
		t.Fatalf("converted events while every subscription takes CloudEvents: %v, %d calls", err, len(rec.Calls()))
	}

	put("eg", "b", eventgrid.CloudEventSchemaV1_0, &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
		{OperatorType: "StringIn", Key: "eventType", Values: []json.RawMessage{json.RawMessage(`"T"`)}}}})
	if only("eg") {
		t.Fatal("CloudEventsOnly with an advanced filter, which reads the body as published")
	}
	if _, err := r.Publish(ctx, egTopic, converted); !errors.Is(err, eventgrid.ErrSubscribersChanged) || len(rec.Calls()) != 1 {
		t.Fatalf("converted events after an advanced filter came: %v, %d calls; want ErrSubscribersChanged, nothing handed on", err, len(rec.Calls()))
	}
	if _, err := r.Publish(ctx, egTopic, converted[:1]); err != nil || len(rec.Calls()) != 2 {
		t.Fatalf("events as published: %v, %d calls", err, len(rec.Calls()))
	}

	if err := reg.DeleteSubscription(ctx, "eg", "b"); err != nil {
		t.Fatal(err)
	}
	put("eg", "c", eventgrid.EventGridSchema, nil)
	if only("eg") {
		t.Fatal("CloudEventsOnly with a subscription that takes EventGridSchema")
	}
}

// newRouter returns a registry that takes http webhooks, and a router over
// it that hands its matches to a recorder.
func newRouter() (*registry.Registry, *mock.Recorder, *registry.Router) {
	opts := registry.DefaultOptions()
	opts.WebhookHTTPSOnly = false
	reg := registry.New(opts, nil)
	rec := &mock.Recorder{}
	return reg, rec, registry.NewRouter(reg, rec)
}
