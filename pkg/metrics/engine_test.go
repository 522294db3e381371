package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// observers fans subscription changes out, as the module does.
type observers []eventgrid.SubscriptionObserver

func (o observers) SubscriptionPut(s *eventgrid.EventSubscription) {
	for _, x := range o {
		x.SubscriptionPut(s)
	}
}

func (o observers) SubscriptionDeleted(s *eventgrid.EventSubscription) {
	for _, x := range o {
		x.SubscriptionDeleted(s)
	}
}

// TestPrometheus_Engine runs a delivery engine and a registry against the
// metrics: one subscription delivers, one fails and drops every event
// after one attempt, then is deleted.
func TestPrometheus_Engine(t *testing.T) {
	ctx := context.Background()
	p := metrics.NewPrometheus()
	send := &mock.Sender{SendFn: func(_ context.Context, b *push.Batch) error {
		if b.Subscription.Name == "bad" {
			return errFail
		}
		return nil
	}}
	e := push.New(push.DefaultOptions(), send, p, zerolog.Nop())
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	p.Collect(e.Stats)
	d := dispatch.New(dispatch.Options{Push: e, Metrics: p})
	p.CollectHeld(d.Holdings)
	reg := registry.New(registry.DefaultOptions(), observers{d, p})
	if _, _, err := reg.PutTopic(ctx, eventgrid.Topic{Name: "Orders"}); err != nil {
		t.Fatalf("PutTopic: %v", err)
	}
	var subs []*eventgrid.EventSubscription
	for _, name := range []string{"good", "bad"} {
		s := eventgrid.EventSubscription{Topic: "orders", Name: name, Destination: eventgrid.Destination{
			EndpointType: eventgrid.WebHook, EndpointURL: "https://127.0.0.1:1/" + name,
		}, RetryPolicy: &eventgrid.RetryPolicy{MaxDeliveryAttempts: 1}}
		stored, _, err := reg.PutSubscription(ctx, s)
		if err != nil {
			t.Fatalf("PutSubscription %s: %v", name, err)
		}
		subs = append(subs, stored)
	}
	const n = 7
	ds := make([]eventgrid.Delivery, n)
	for i := range ds {
		ev := &eventgrid.Event{ID: fmt.Sprint(i), Body: []byte(fmt.Sprintf(`{"id":"%d"}`, i)), Accepted: time.Now()}
		ds[i] = eventgrid.Delivery{Event: ev, Subscriptions: subs}
	}
	if err := d.Publish(ctx, eventgrid.Publication{Topic: eventgrid.Topic{Name: "Orders"}, Deliveries: ds}); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	sub := func(name string, more ...string) []string {
		return append([]string{"topic", "Orders", "subscription", name}, more...)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := MustScrape(t, p.Handler())
		good, _ := s.value("eventgrid_subscription_delivery_success_total", sub("good")...)
		expired, _ := s.value("eventgrid_subscription_expired_total", sub("bad")...)
		queued, _ := s.value("eventgrid_queued_events")
		if good == n && expired == n && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %v, expired %v, queued %v; want %d, %d, 0", good, expired, queued, n, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s := MustScrape(t, p.Handler())
	assertSeries(t, s, []series{
		{"eventgrid_subscription_delivery_attempts_total", sub("good"), n},
		{"eventgrid_subscription_delivery_failure_total", sub("good"), 0},
		{"eventgrid_subscription_system_delay_for_first_attempt_ms#count", sub("good"), n},
		{"eventgrid_subscription_delivery_success_latency_ms#count", sub("good"), n},
		{"eventgrid_subscription_delivery_failure_total", sub("bad"), n},
		{"eventgrid_subscription_delivery_attempts_total", sub("bad"), n},
		{"eventgrid_events_dropped_total", sub("bad", "reason", "MaxDeliveryAttemptsExceeded"), n},
		{"eventgrid_push_events", sub("bad", "state", "ready"), 0},
		{"eventgrid_deliveries_in_flight", nil, 0},
		{"eventgrid_queued_bytes", nil, 0},
	})
	if err := reg.DeleteSubscription(ctx, "orders", "bad"); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	s = MustScrape(t, p.Handler())
	if got := s.seriesWith("subscription", "bad"); len(got) != 0 {
		t.Errorf("series of the deleted subscription remain: %v", got)
	}
	if got := s.seriesWith("subscription", "good"); len(got) == 0 {
		t.Errorf("series of the other subscription are gone")
	}
}
