package registry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

func TestQueueSubscriptions(t *testing.T) {
	r, _ := MustNew(t, nil)
	MustPutTopic(t, r, "eg", eventgrid.EventGridSchema)
	MustPutTopic(t, r, "custom", eventgrid.CustomEventSchema)
	queue := func(topic string, q eventgrid.QueueConfig) eventgrid.EventSubscription {
		return eventgrid.EventSubscription{Topic: topic, Name: "q", Queue: &q}
	}
	ok := eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: eventgrid.DefaultQueueEventTTL}

	stored, _, err := r.PutSubscription(t.Context(), queue("eg", ok))
	if err != nil {
		t.Fatal(err)
	}
	// CloudEvents, converted from the topic's EventGridSchema; the 7-day
	// default bounded by the 1-day expiry limit.
	if stored.EventDeliverySchema != eventgrid.CloudEventSchemaV1_0 || stored.Queue.EventTimeToLive != 24*time.Hour {
		t.Fatalf("stored %+v, queue %+v", stored, stored.Queue)
	}

	for name, tc := range map[string]struct {
		sub   eventgrid.EventSubscription
		field string
	}{
		"CustomTopic":   {queue("custom", ok), "deliveryMode"},
		"TTLOverLimit":  {queue("eg", eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: 48 * time.Hour, EventTimeToLiveText: "P2D"}), "eventTimeToLive"},
		"TTLUnderLimit": {queue("eg", eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: time.Second, EventTimeToLiveText: "PT1S"}), "eventTimeToLive"},
		"LockTooShort":  {queue("eg", eventgrid.QueueConfig{ReceiveLockSeconds: 59, MaxDeliveryCount: 10}), "receiveLockDurationInSeconds"},
		"CountTooHigh":  {queue("eg", eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 101}), "maxDeliveryCount"},
		"EventGridOut": {func() eventgrid.EventSubscription {
			s := queue("eg", ok)
			s.EventDeliverySchema = eventgrid.EventGridSchema
			return s
		}(), "eventDeliverySchema"},
		"WithRetryPolicy": {func() eventgrid.EventSubscription {
			s := queue("eg", ok)
			s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 3}
			return s
		}(), "retryPolicy"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := r.PutSubscription(t.Context(), tc.sub)
			if err == nil || !strings.Contains(eventgrid.ErrorMessage(err), tc.field) {
				t.Fatalf("put: %v; want an error naming %s", err, tc.field)
			}
		})
	}
}

// guard refuses every change of a subscription that switches it between
// push and queue, as the queue store and the push engine do while they
// hold its events.
type guard struct {
	mock.SubscriptionObserver
	old, sub *eventgrid.EventSubscription
}

func (g *guard) CheckSubscriptionPut(old, sub *eventgrid.EventSubscription) error {
	g.old, g.sub = old, sub
	if old.IsQueue() != sub.IsQueue() {
		return eventgrid.Errorf(eventgrid.EEventsHeld, "holds 5 events")
	}
	return nil
}

// TestGuardRefusesSwitch: the registry asks an observer that guards
// subscriptions before it replaces one, and when the observer refuses, it
// answers the refusal, keeps the subscription as it was and tells no
// observer of a change.
func TestGuardRefusesSwitch(t *testing.T) {
	g := &guard{}
	opts := registry.DefaultOptions()
	opts.WebhookHTTPSOnly = false
	r := registry.New(opts, g)
	MustPutTopic(t, r, "t", eventgrid.CloudEventSchemaV1_0)
	q := eventgrid.EventSubscription{Topic: "t", Name: "s", Queue: &eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: time.Hour}}
	stored, _, err := r.PutSubscription(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if g.old != nil {
		t.Fatalf("the guard was asked about a new subscription")
	}
	changes := len(g.Changes())
	_, _, err = r.PutSubscription(t.Context(), hook("t", "s"))
	mustCode(t, err, eventgrid.EEventsHeld)
	if g.old != stored || g.sub.UID != stored.UID || g.sub.IsQueue() {
		t.Fatalf("the guard was asked about %+v replacing %+v", g.sub, g.old)
	}
	if got, _ := r.Subscription(t.Context(), "t", "s"); got != stored {
		t.Fatalf("the subscription became %+v", got)
	}
	if n := len(g.Changes()); n != changes {
		t.Fatalf("the observer was told of %d changes after the refusal", n-changes)
	}
	// A change the guard accepts is made.
	q.Queue.MaxDeliveryCount = 3
	if s, _, err := r.PutSubscription(t.Context(), q); err != nil || s.Queue.MaxDeliveryCount != 3 {
		t.Fatalf("accepted change: %+v, %v", s, err)
	}
}
