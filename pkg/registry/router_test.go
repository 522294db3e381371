package registry_test

import (
	"context"
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
	opts := registry.DefaultOptions()
	opts.WebhookHTTPSOnly = false
	reg := registry.New(opts, nil)
	rec := &mock.Recorder{}
	r := registry.NewRouter(reg, rec)
	if _, _, err := reg.PutTopic(ctx, eventgrid.Topic{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	topic, subscribed, err := r.Topic("T")
	if err != nil || topic.Name != "t" || subscribed {
		t.Fatalf("Topic = %+v, %v, %v; want t without subscriptions", topic, subscribed, err)
	}
	if _, _, err := reg.PutSubscription(ctx, eventgrid.EventSubscription{Topic: "t", Name: "a",
		Filter:      &eventgrid.Filter{SubjectBeginsWith: "/a"},
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}}); err != nil {
		t.Fatal(err)
	}
	if _, subscribed, _ = r.Topic("t"); !subscribed {
		t.Fatal("Topic: a topic with a subscription is not subscribed")
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
