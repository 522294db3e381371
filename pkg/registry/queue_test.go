package registry_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
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
