package registry_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/schema"
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
// body, ends that. Events built so are handed on as they are while the
// subscriptions allow them, and restored to their bodies as published,
// then matched and handed on, once they no longer do.
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
	egTopic := eventgrid.Topic{Name: "eg", InputSchema: eventgrid.EventGridSchema}
	published := mustDecode(t, false)

	put("eg", "a", eventgrid.CloudEventSchemaV1_0, &eventgrid.Filter{IncludedEventTypes: []string{"T"}, SubjectBeginsWith: "/"})
	put("ce", "a", eventgrid.CloudEventSchemaV1_0, nil)
	if !only("eg") || only("ce") {
		t.Fatalf("CloudEventsOnly: EventGridSchema topic %v, CloudEvents topic %v; want true, false", only("eg"), only("ce"))
	}
	if _, err := r.Publish(ctx, egTopic, mustDecode(t, true)); err != nil || len(rec.Calls()) != 1 ||
		!rec.Calls()[0].Deliveries[0].Event.Converted {
		t.Fatalf("converted events while every subscription takes CloudEvents: %v, %d calls", err, len(rec.Calls()))
	}

	put("eg", "b", eventgrid.CloudEventSchemaV1_0, &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
		{OperatorType: "StringIn", Key: "eventType", Values: []json.RawMessage{json.RawMessage(`"T"`)}}}})
	if only("eg") {
		t.Fatal("CloudEventsOnly with an advanced filter, which reads the body as published")
	}
	if _, err := r.Publish(ctx, egTopic, mustDecode(t, true)); err != nil || len(rec.Calls()) != 2 {
		t.Fatalf("converted events after an advanced filter came: %v, %d calls; want them handed on", err, len(rec.Calls()))
	}
	for i, d := range rec.Calls()[1].Deliveries {
		if d.Event.Converted || string(d.Event.Body) != string(published[i].Body) || len(d.Subscriptions) != 2 {
			t.Errorf("event %d handed on as %s (converted %v) for %d subscriptions; want it as published, for a and b",
				i, d.Event.Body, d.Event.Converted, len(d.Subscriptions))
		}
	}
	if _, err := r.Publish(ctx, egTopic, mustDecode(t, false)); err != nil || len(rec.Calls()) != 3 {
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

// mustDecode decodes two events of topic eg, built as their CloudEvents
// when converted is set.
func mustDecode(t *testing.T, converted bool) []*eventgrid.Event {
	t.Helper()
	const body = `[{"id":"1","subject":"/1","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":{"n":1},"dataVersion":"1"},` +
		`{"id":"2","subject":"/2","eventType":"T","eventTime":"2024-05-06T07:08:09Z","dataVersion":"1"}]`
	evs, err := (&schema.Scratch{ToCloudEvents: converted}).DecodeBatch(eventgrid.EventGridSchema, "eg", []byte(body), time.Now())
	if err != nil || len(evs) != 2 || evs[0].Converted != converted {
		t.Fatalf("decoding: %d events, %v", len(evs), err)
	}
	return evs
}

// TestConvert: a subscription that takes CloudEvents gets an
// EventGridSchema event's CloudEvent, one built as its CloudEvent as it
// is, and any other subscription the event as published.
func TestConvert(t *testing.T) {
	eg := eventgrid.Topic{Name: "eg", InputSchema: eventgrid.EventGridSchema}
	ce := &eventgrid.EventSubscription{EventDeliverySchema: eventgrid.CloudEventSchemaV1_0}
	plain := &eventgrid.EventSubscription{EventDeliverySchema: eventgrid.EventGridSchema}
	ev := mustDecode(t, false)[0]
	want, err := schema.CloudEventOf(ev)
	if err != nil {
		t.Fatal(err)
	}
	if got := registry.Convert(nil, eg, ce, ev); string(got) != string(want) {
		t.Errorf("converted %s; want %s", got, want)
	}
	if got := registry.Convert(nil, eg, plain, ev); &got[0] != &ev.Body[0] {
		t.Errorf("an EventGridSchema subscription gets %s; want the event as published", got)
	}
	built := mustDecode(t, true)[0]
	if got := registry.Convert(nil, eg, ce, built); &got[0] != &built.Body[0] {
		t.Errorf("an event built as its CloudEvent gets %s; want it as it is", got)
	}
	if got := registry.Convert(nil, eventgrid.Topic{Name: "ce", InputSchema: eventgrid.CloudEventSchemaV1_0}, ce, ev); &got[0] != &ev.Body[0] {
		t.Errorf("a CloudEvents topic's event gets %s; want it as it is", got)
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
