package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// queueStatus returns a subscription's deliveryStatus.
func queueStatus(t *testing.T, base, sub string) map[string]any {
	t.Helper()
	var s struct {
		Properties struct{ DeliveryStatus map[string]any }
	}
	if err := json.Unmarshal(mustDo(t, http.MethodGet, base+"/topics/t/eventSubscriptions/"+sub+"?"+apiVersion, "", nil, http.StatusOK), &s); err != nil {
		t.Fatal(err)
	}
	return s.Properties.DeliveryStatus
}

// receiveAll receives up to 100 events of sub at once and returns their
// lock tokens.
func receiveAll(t *testing.T, base, sub string) []string {
	t.Helper()
	var a struct {
		Value []struct{ BrokerProperties struct{ LockToken string } }
	}
	body := mustDo(t, http.MethodPost, base+"/topics/t/eventSubscriptions/"+sub+":receive?"+nsAPI+"&maxEvents=100&maxWaitTime=10", "", nil, http.StatusOK)
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	var toks []string
	for _, v := range a.Value {
		toks = append(toks, v.BrokerProperties.LockToken)
	}
	return toks
}

// TestPull_SwitchRefusedWhileHolding: a PUT that would switch a
// subscription between queue and push while it holds events is refused
// with 409 naming how many events it would drop, and changes nothing; once
// the events are gone the same PUT is accepted. Log lines name a queue
// subscription's endpointType Queue.
func TestPull_SwitchRefusedWhileHolding(t *testing.T) {
	t.Parallel()
	b := queueBroker(t, nil, []string{"q"}, "broker__stopTimeoutInSeconds", "1")
	for i := range 5 {
		publishCE(t, b.URL, bigEvent(fmt.Sprint("e", i), 300))
	}
	hung := newHungListener(t)
	asPush := map[string]any{"properties": map[string]any{"destination": webhookDest(hung.URL)}}
	url := b.URL + "/topics/t/eventSubscriptions/q?" + apiVersion
	code, _, body := do(t, nil, http.MethodPut, url, "application/json", asPush)
	if code != http.StatusConflict || !strings.Contains(string(body), "holds 5 events") || !strings.Contains(string(body), "SubscriptionHoldsEvents") {
		t.Fatalf("queue to push with 5 events: %d %s; want 409 naming 5 events", code, body)
	}
	if st := queueStatus(t, b.URL, "q"); st["available"] != 5.0 {
		t.Fatalf("after the refusal deliveryStatus is %v; want the 5 events still available", st)
	}
	saved := b.Logs("event subscription saved")
	if len(saved) != 1 || saved[0]["endpointType"] != "Queue" {
		t.Errorf("log lines of the queue subscription: %v; want endpointType Queue", saved)
	}

	toks, _ := json.Marshal(map[string]any{"lockTokens": receiveAll(t, b.URL, "q")})
	mustDo(t, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/q:acknowledge?"+nsAPI, "application/json", toks, http.StatusOK)
	mustDo(t, http.MethodPut, url, "application/json", asPush, http.StatusOK)

	// Back to queue while the push engine holds an event for the hung
	// endpoint.
	publishCE(t, b.URL, bigEvent("p", 300))
	eventually(t, 10*time.Second, func() error {
		if hung.accepted.Load() == 0 {
			return fmt.Errorf("the event is not in flight yet")
		}
		return nil
	})
	code, _, body = do(t, nil, http.MethodPut, url, "application/json", map[string]any{"properties": queueProps(nil)})
	if code != http.StatusConflict || !strings.Contains(string(body), "holds 1 events") {
		t.Fatalf("push to queue with an event in flight: %d %s; want 409 naming 1 event", code, body)
	}
}

// TestPull_DeletedSubscriptionDeadLetterBudget: dead letters waiting for
// unreachable storage hold the broker's budget while their subscription
// exists, and release it at once when it is deleted.
func TestPull_DeletedSubscriptionDeadLetterBudget(t *testing.T) {
	t.Parallel()
	dead := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:1/devstoreaccount1"
	b := queueBroker(t, map[string]any{"maxDeliveryCount": 1, "deadLetterDestination": deadLetterDest(dead)}, []string{"q", "other"},
		"broker__maxQueuedEvents", "120")
	for i := range 50 {
		publishCE(t, b.URL, bigEvent(fmt.Sprint("e", i), 300))
	}
	toks := receiveAll(t, b.URL, "q")
	body, _ := json.Marshal(map[string]any{"lockTokens": toks})
	mustDo(t, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/q:reject?"+nsAPI, "application/json", body, http.StatusOK)
	queued := func() float64 {
		v, _ := mustScrape(t, b.URL).value("eventgrid_queued_events")
		return v
	}
	eventually(t, 10*time.Second, func() error {
		if len(b.Logs("dead letters could not be written to storage; they wait and are retried")) == 0 {
			return fmt.Errorf("no failed dead-letter write yet")
		}
		return nil
	})
	if v := queued(); v != 100 {
		t.Fatalf("the broker holds %v events; want 50 dead letters waiting and 50 events of the other subscription", v)
	}
	deleted := time.Now()
	mustDo(t, http.MethodDelete, b.URL+"/topics/t/eventSubscriptions/q?"+apiVersion, "", nil, http.StatusOK)
	eventually(t, 5*time.Second, func() error {
		if v := queued(); v != 50 {
			return fmt.Errorf("the broker holds %v events; want the other subscription's 50", v)
		}
		return nil
	})
	t.Logf("budget released %v after the delete", time.Since(deleted).Round(time.Millisecond))
	// The room is usable: 70 more events fit beside the other 50.
	for i := range 70 {
		publishCE(t, b.URL, bigEvent(fmt.Sprint("f", i), 300))
	}
}

// TestPull_QueueFullCounted: a publish refused with 503 because a queue
// subscription's share is full counts in eventgrid_publish_rejected_total.
func TestPull_QueueFullCounted(t *testing.T) {
	t.Parallel()
	b := queueBroker(t, nil, []string{"q"}, "broker__maxQueuedEventsPerSubscription", "2")
	publishCE(t, b.URL, bigEvent("a", 300))
	publishCE(t, b.URL, bigEvent("b", 300))
	code, h, body := do(t, nil, http.MethodPost, b.URL+"/topics/t:publish?"+nsAPI, "application/cloudevents+json; charset=utf-8", bigEvent("c", 300))
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Fatalf("publish into a full share: %d %s", code, body)
	}
	if v, _ := mustScrape(t, b.URL).value("eventgrid_publish_rejected_total", "reason", "subscription_full"); v != 1 {
		t.Fatalf("eventgrid_publish_rejected_total{reason=subscription_full} = %v; want 1", v)
	}
}

// TestConfig_QueueTimeScaleBounded: a queue time scale above 1, which
// would push events' times to live past what a duration holds and drop
// every event on arrival, stops the start with an error naming the key.
func TestConfig_QueueTimeScaleBounded(t *testing.T) {
	t.Parallel()
	code, out := runToExit(t, merge(devEnv(), "broker__queueTimeScale", "1e6"))
	if code == 0 || !strings.Contains(out, "broker__queueTimeScale") || !strings.Contains(out, "up to 1") {
		t.Errorf("start with broker__queueTimeScale 1e6: exit %d\n%s", code, out)
	}
}
