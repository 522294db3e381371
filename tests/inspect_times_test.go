package tests_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestInspection_OneTimePerEvent: the same event reads the same time in
// every view: the tail's id, the peek's enqueuedTime and the topic's
// lastReceivedTime are the time the broker accepted it, and the outcome
// stream's nextAttemptTime is the peek's; a peek lists a request's events
// in the order they were published, wherever each waits.
func TestInspection_OneTimePerEvent(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "broker__backoffIntervals", "1m,10m"))
	k := newSink(t, func(int, *http.Request) int { return http.StatusServiceUnavailable })
	createTopic(t, b.URL, "orders", "EventGridSchema")
	createSubscription(t, b.URL, "orders", "s", map[string]any{"destination": webhookDest(k.URL)})
	tail := openStream(t, b.URL+"/topics/orders/events", true)
	outcomes := openStream(t, b.URL+"/topics/orders/eventSubscriptions/s/deliveries", true)
	publish(t, b.URL, "orders", egEvents("o", 3))
	tail.waitNamed("published", 3, 10*time.Second)
	outcomes.waitNamed("delivery", 3, 10*time.Second)

	accepted := map[string]bool{}
	evs, _, _ := tail.snapshot()
	for _, e := range evs {
		if e.name == "published" {
			accepted[e.id] = true
		}
	}
	next := map[string]string{}
	for _, d := range outcomes.named("delivery") {
		var o struct{ EventID, NextAttemptTime string }
		_ = json.Unmarshal([]byte(d), &o)
		next[o.EventID] = o.NextAttemptTime
	}
	var p struct {
		Value []struct {
			Event         struct{ ID string }
			DeliveryState struct{ EnqueuedTime, NextAttemptTime string }
		}
	}
	_ = json.Unmarshal(mustDo(t, http.MethodGet, b.URL+"/topics/orders/eventSubscriptions/s/events?"+apiVersion, "", nil, http.StatusOK), &p)
	var ids []string
	for _, v := range p.Value {
		ids = append(ids, v.Event.ID)
		if len(accepted) != 1 || !accepted[v.DeliveryState.EnqueuedTime] {
			t.Errorf("%s: enqueuedTime %s, the tail's ids %v", v.Event.ID, v.DeliveryState.EnqueuedTime, accepted)
		}
		if v.DeliveryState.NextAttemptTime != next[v.Event.ID] {
			t.Errorf("%s: the peek's nextAttemptTime %s, the outcome's %s", v.Event.ID, v.DeliveryState.NextAttemptTime, next[v.Event.ID])
		}
	}
	if strings.Join(ids, ",") != "o0,o1,o2" {
		t.Errorf("peek order %v", ids)
	}
	var topic struct {
		Properties struct {
			Stats struct{ LastReceivedTime string }
		}
	}
	_ = json.Unmarshal(mustDo(t, http.MethodGet, b.URL+"/topics/orders?"+apiVersion, "", nil, http.StatusOK), &topic)
	if !accepted[topic.Properties.Stats.LastReceivedTime] {
		t.Errorf("the topic's lastReceivedTime %s, the tail's ids %v", topic.Properties.Stats.LastReceivedTime, accepted)
	}
}
