package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The operator's actions (docs/api.md#actions), against the real broker,
// for push and queue subscriptions: redrive, retry now, pause and resume,
// purge, and their refusal on declared subscriptions.

// act posts an action of a subscription and fails the test unless the
// broker answers want; it returns the answer's body, without its final
// line break.
func act(t *testing.T, base, topic, sub, action string, body any, want int) []byte {
	t.Helper()
	url := base + "/topics/" + topic + "/eventSubscriptions/" + sub + ":" + action + "?" + apiVersion
	code, _, rb := do(t, nil, http.MethodPost, url, "application/json", body)
	if code != want {
		t.Fatalf("POST …/%s:%s = %d, want %d: %s", sub, action, code, want, rb)
	}
	return []byte(strings.TrimSpace(string(rb)))
}

// statusOf reads a subscription's deliveryStatus.
func statusOf(t *testing.T, base, topic, sub string) map[string]any {
	t.Helper()
	var r struct {
		Properties struct{ DeliveryStatus map[string]any }
	}
	if err := json.Unmarshal(mustDo(t, http.MethodGet, subURLOf(base, topic, sub), "", nil, http.StatusOK), &r); err != nil {
		t.Fatal(err)
	}
	return r.Properties.DeliveryStatus
}

// switchSink is a sink that answers 503 until fixed, then 200.
type switchSink struct {
	*sink
	fixed atomic.Bool
}

func newSwitchSink(t *testing.T) *switchSink {
	s := &switchSink{}
	s.sink = newSink(t, func(int, *http.Request) int {
		if s.fixed.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	return s
}

// givenUp reads a subscription's given-up list.
func givenUp(t *testing.T, base, topic, sub string) []map[string]any {
	t.Helper()
	var r struct{ Value []map[string]any }
	url := base + "/topics/" + topic + "/eventSubscriptions/" + sub + "/failures?" + apiVersion
	if err := json.Unmarshal(mustDo(t, http.MethodGet, url, "", nil, http.StatusOK), &r); err != nil {
		t.Fatal(err)
	}
	return r.Value
}

// TestActions_RedrivePush: events a push subscription gave up on are
// redriven once its endpoint is fixed: each is delivered once, to that
// subscription only, and a second redrive moves none of them again.
func TestActions_RedrivePush(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("metrics__reporterType", "prometheus"))
	failing, other := newSwitchSink(t), newSink(t, nil)
	createTopic(t, b.URL, "orders", "EventGridSchema")
	createSubscription(t, b.URL, "orders", "failing", map[string]any{"destination": webhookDest(failing.URL),
		"retryPolicy": map[string]any{"maxDeliveryAttempts": 2}})
	createSubscription(t, b.URL, "orders", "other", map[string]any{"destination": webhookDest(other.URL)})
	publish(t, b.URL, "orders", egEvents("o", 5))
	other.waitAccepted(t, 5, 10*time.Second)
	eventually(t, 10*time.Second, func() error {
		if st := statusOf(t, b.URL, "orders", "failing"); st["dropped"] != 5.0 {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})

	failing.fixed.Store(true)
	var a struct {
		Moved    int
		NotMoved []map[string]string
	}
	_ = json.Unmarshal(act(t, b.URL, "orders", "failing", "redrive", map[string]any{}, http.StatusOK), &a)
	if a.Moved != 5 || a.NotMoved == nil || len(a.NotMoved) != 0 {
		t.Fatalf("redrive = %+v, want 5 moved and an empty notMoved", a)
	}
	got := failing.waitAccepted(t, 5, 10*time.Second)
	eventually(t, 10*time.Second, func() error {
		if st := statusOf(t, b.URL, "orders", "failing"); st["delivered"] != 5.0 || st["state"] != "Idle" {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	for id, n := range got {
		if n != 1 {
			t.Errorf("%s delivered %d times after the redrive", id, n)
		}
	}
	for id, n := range other.accepted(t) {
		if n != 1 {
			t.Errorf("the topic's other subscription got %s %d times", id, n)
		}
	}
	for _, f := range givenUp(t, b.URL, "orders", "failing") {
		if f["redrivenTime"] == nil {
			t.Errorf("given up, not marked redriven: %v", f)
		}
	}
	again := string(act(t, b.URL, "orders", "failing", "redrive", map[string]any{}, http.StatusOK))
	if again != `{"moved":0,"notMoved":[]}` {
		t.Errorf("a second redrive of all: %s", again)
	}
	byID := string(act(t, b.URL, "orders", "failing", "redrive", map[string]any{"ids": []string{"o1", "nope"}}, http.StatusOK))
	if byID != `{"moved":0,"notMoved":[{"id":"o1","reason":"alreadyRedriven"},{"id":"nope","reason":"notFound"}]}` {
		t.Errorf("a redrive by ids: %s", byID)
	}
	m := mustScrape(t, b.URL)
	m.mustValue(t, 3, "eventgrid_subscription_actions_total", "topic", "orders", "subscription", "failing", "action", "redrive")
	m.mustValue(t, 5, "eventgrid_subscription_action_events_total", "topic", "orders", "subscription", "failing", "action", "redrive")
	if n := len(b.Logs("given-up events redriven to their subscription")); n != 3 {
		t.Errorf("%d log lines of redrives, want 3", n)
	}
}

// TestActions_RedriveBudget: a redrive is one request of the budget: one
// that could never fit is 413, one that does not fit now 503 with
// Retry-After, and either moves nothing; bad bodies are 400 naming what is
// wrong.
func TestActions_RedriveBudget(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__maxQueuedEventsPerSubscription", "3", "broker__publishHoldInMilliseconds", "0"))
	k := newSwitchSink(t)
	createTopic(t, b.URL, "orders", "EventGridSchema")
	createSubscription(t, b.URL, "orders", "s", map[string]any{"destination": webhookDest(k.URL),
		"retryPolicy": map[string]any{"maxDeliveryAttempts": 1}})
	for i := range 2 { // one request after the other: 4 at once do not fit
		publish(t, b.URL, "orders", egEvents(fmt.Sprint("r", i, "-"), 2))
		eventually(t, 10*time.Second, func() error {
			if st := statusOf(t, b.URL, "orders", "s"); st["dropped"] != float64(2*i+2) {
				return fmt.Errorf("status %v", st)
			}
			return nil
		})
	}
	rb := string(act(t, b.URL, "orders", "s", "redrive", map[string]any{}, http.StatusRequestEntityTooLarge))
	if !strings.Contains(rb, "broker__maxQueuedEventsPerSubscription") {
		t.Errorf("413 does not name the bound: %s", rb)
	}
	// A subscription's share full now: 2 events wait (a minute of
	// back-off, paused), and 2 more do not fit beside them.
	act(t, b.URL, "orders", "s", "pause", nil, http.StatusOK)
	publish(t, b.URL, "orders", egEvents("w", 2))
	code, h, body := do(t, nil, http.MethodPost, b.URL+"/topics/orders/eventSubscriptions/s:redrive?"+apiVersion, "application/json",
		map[string]any{"ids": []string{"r0-0", "r0-1"}})
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("a redrive that does not fit now = %d (Retry-After %q): %s", code, h.Get("Retry-After"), body)
	}
	for _, f := range givenUp(t, b.URL, "orders", "s") {
		if f["redrivenTime"] != nil {
			t.Errorf("a refused redrive marked %v", f)
		}
	}
	act(t, b.URL, "orders", "s", "purge", nil, http.StatusOK)
	k.fixed.Store(true)
	act(t, b.URL, "orders", "s", "resume", nil, http.StatusOK)
	if a := string(act(t, b.URL, "orders", "s", "redrive", map[string]any{"ids": []string{"r0-0", "r0-1"}}, http.StatusOK)); a != `{"moved":2,"notMoved":[]}` {
		t.Errorf("once it fits: %s", a)
	}
	k.waitAccepted(t, 2, 10*time.Second)

	for _, tc := range []struct{ body, says string }{
		{`{"ids": "r0-0"}`, "ids must be a JSON array"},
		{`{"since": "2026-01-01T00:00:00Z"}`, `\"since\" is not a member`},
		{`{"givenUpSince": "today"}`, "givenUpSince must be an RFC 3339 time"},
		{`{"ids": [}`, "not valid JSON"},
	} {
		if rb := string(act(t, b.URL, "orders", "s", "redrive", tc.body, http.StatusBadRequest)); !strings.Contains(rb, tc.says) {
			t.Errorf("redrive %s: %s, want it to say %q", tc.body, rb, tc.says)
		}
	}
	act(t, b.URL, "orders", "nope", "redrive", map[string]any{}, http.StatusNotFound)
}

// TestActions_RedriveQueue: on a queue subscription, events rejected by
// their receiver and events that outlived their time to live are redriven
// alike, and received again as new (delivery count 1).
func TestActions_RedriveQueue(t *testing.T) {
	t.Parallel()
	// A minute's lock and time to live last 6 s: time enough for the
	// receive and the reject under the load of other tests.
	b := queueBroker(t, map[string]any{"receiveLockDurationInSeconds": 60, "maxDeliveryCount": 5, "eventTimeToLive": "PT1M"},
		[]string{"q"}, "broker__queueTimeScale", "0.1")
	publishCE(t, b.URL, `{"specversion":"1.0","id":"rejected","source":"/s","type":"t"}`)
	got := receiveIDs(t, b.URL, "q", 1)
	act(t, b.URL, "t", "q", "pause", nil, http.StatusOK) // the next one is not received before it expires
	mustDo(t, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/q:reject?"+nsAPI, "application/json",
		map[string]any{"lockTokens": []string{got[0].token}}, http.StatusOK)
	publishCE(t, b.URL, `{"specversion":"1.0","id":"expired","source":"/s","type":"t"}`)
	eventually(t, 20*time.Second, func() error {
		if n := len(givenUp(t, b.URL, "t", "q")); n != 2 {
			return fmt.Errorf("%d given up", n)
		}
		return nil
	})
	act(t, b.URL, "t", "q", "resume", nil, http.StatusOK)
	if a := string(act(t, b.URL, "t", "q", "redrive", nil, http.StatusOK)); a != `{"moved":2,"notMoved":[]}` {
		t.Fatalf("redrive: %s", a)
	}
	again := receiveIDs(t, b.URL, "q", 2)
	if len(again) != 2 || again[0].id != "rejected" || again[1].id != "expired" || again[0].count != 1 || again[1].count != 1 {
		t.Errorf("received after the redrive: %+v", again)
	}
}

// received is an event a receive handed out.
type receivedEvent struct {
	id, token string
	count     int
}

// receiveIDs receives up to n events of a queue subscription of topic t,
// waiting until n came.
func receiveIDs(t *testing.T, base, sub string, n int) []receivedEvent {
	t.Helper()
	var out []receivedEvent
	eventually(t, 10*time.Second, func() error {
		url := fmt.Sprintf("%s/topics/t/eventSubscriptions/%s:receive?%s&maxEvents=%d&maxWaitTime=10", base, sub, nsAPI, n-len(out))
		var r struct {
			Value []struct {
				BrokerProperties struct {
					LockToken     string
					DeliveryCount int
				}
				Event struct{ ID string }
			}
		}
		if err := json.Unmarshal(mustDo(t, http.MethodPost, url, "", nil, http.StatusOK), &r); err != nil {
			t.Fatal(err)
		}
		for _, v := range r.Value {
			out = append(out, receivedEvent{v.Event.ID, v.BrokerProperties.LockToken, v.BrokerProperties.DeliveryCount})
		}
		if len(out) < n {
			return fmt.Errorf("received %d of %d", len(out), n)
		}
		return nil
	})
	return out
}

// TestActions_RetryNowNeverGivesUp: with maxDeliveryAttempts 3 and an
// endpoint that still fails, retry now again and again gives up nothing:
// a forced attempt does not count. Once the endpoint is fixed, one more
// delivers everything.
func TestActions_RetryNowNeverGivesUp(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "broker__backoffIntervals", "1h,1h"))
	k := newSwitchSink(t)
	createTopic(t, b.URL, "orders", "EventGridSchema")
	createSubscription(t, b.URL, "orders", "s", map[string]any{"destination": webhookDest(k.URL),
		"retryPolicy": map[string]any{"maxDeliveryAttempts": 3}})
	publish(t, b.URL, "orders", egEvents("o", 4))
	settled := func(requests int) {
		t.Helper()
		eventually(t, 10*time.Second, func() error {
			st := statusOf(t, b.URL, "orders", "s")
			if n := len(k.requests()); n != requests || st["inBackoff"] != 4.0 || st["inFlight"] != 0.0 {
				return fmt.Errorf("%d requests, status %v", n, st)
			}
			return nil
		})
	}
	settled(4)
	for i := range 6 {
		var a map[string]int
		_ = json.Unmarshal(act(t, b.URL, "orders", "s", "retryNow", nil, http.StatusOK), &a)
		if a["moved"] != 4 || a["atLastAttempt"] != 0 {
			t.Fatalf("retry now %d: %v", i, a)
		}
		settled(8 + 4*i)
	}
	if st := statusOf(t, b.URL, "orders", "s"); st["dropped"] != 0.0 || st["failedAttempts"] != 28.0 {
		t.Errorf("after 6 retries: %v", st)
	}
	var peek struct {
		Value []struct{ DeliveryState map[string]any }
	}
	_ = json.Unmarshal(mustDo(t, http.MethodGet, b.URL+"/topics/orders/eventSubscriptions/s/events?"+apiVersion, "", nil, http.StatusOK), &peek)
	for _, v := range peek.Value {
		wantFields(t, "peeked", v.DeliveryState, map[string]any{"attempts": 1, "maxAttempts": 3, "queue": "backoff1"})
	}
	k.fixed.Store(true)
	act(t, b.URL, "orders", "s", "retryNow", nil, http.StatusOK)
	if got := k.waitAccepted(t, 4, 10*time.Second); len(got) != 4 {
		t.Errorf("delivered %v", got)
	}
}

// TestActions_PauseResumePush: a paused push subscription sends nothing,
// reads Paused with pausedSince in GET and in the metrics, and delivers
// what arrived meanwhile once resumed.
func TestActions_PauseResumePush(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("metrics__reporterType", "prometheus"))
	k := newSink(t, nil)
	createTopic(t, b.URL, "orders", "EventGridSchema")
	createSubscription(t, b.URL, "orders", "s", map[string]any{"destination": webhookDest(k.URL)})
	var sub struct {
		Name       string
		Properties struct{ DeliveryStatus map[string]any }
	}
	_ = json.Unmarshal(act(t, b.URL, "orders", "s", "pause", nil, http.StatusOK), &sub)
	if sub.Name != "s" || sub.Properties.DeliveryStatus["state"] != "Paused" || sub.Properties.DeliveryStatus["pausedSince"] == nil {
		t.Fatalf("pause answered %+v", sub)
	}
	publish(t, b.URL, "orders", egEvents("p", 3))
	wantFields(t, "paused", statusOf(t, b.URL, "orders", "s"), map[string]any{"state": "Paused", "ready": 3, "inFlight": 0, "pausedSince": "set"})
	mustScrape(t, b.URL).mustValue(t, 1, "eventgrid_subscription_paused", "topic", "orders", "subscription", "s")
	// A PUT over the API keeps the pause.
	createSubscription(t, b.URL, "orders", "s", map[string]any{"destination": webhookDest(k.URL), "retryPolicy": map[string]any{"maxDeliveryAttempts": 5}})
	if n := len(k.requests()); n != 0 {
		t.Fatalf("a paused subscription sent %d requests", n)
	}
	var resumed struct {
		Properties struct{ DeliveryStatus map[string]any }
	}
	_ = json.Unmarshal(act(t, b.URL, "orders", "s", "resume", nil, http.StatusOK), &resumed)
	if st := resumed.Properties.DeliveryStatus; st["pausedSince"] != nil || st["state"] == "Paused" {
		t.Errorf("resume answered %+v", st)
	}
	k.waitAccepted(t, 3, 10*time.Second)
	mustScrape(t, b.URL).mustValue(t, 0, "eventgrid_subscription_paused", "topic", "orders", "subscription", "s")
	if n := len(b.Logs("event subscription paused")) + len(b.Logs("event subscription resumed")); n != 2 {
		t.Errorf("%d log lines of pause and resume, want 2", n)
	}
}

// TestActions_PauseResumeQueue: while a queue subscription is paused a
// receive hands nothing out and waits, as on an empty queue, and the
// status says a receiver waits; resuming hands it the events.
func TestActions_PauseResumeQueue(t *testing.T) {
	t.Parallel()
	b := queueBroker(t, map[string]any{"receiveLockDurationInSeconds": 60, "maxDeliveryCount": 5}, []string{"q"})
	if st := statusOf(t, b.URL, "t", "q"); st["state"] != "Idle" {
		t.Errorf("empty: %v", st)
	}
	publishCE(t, b.URL, `{"specversion":"1.0","id":"a","source":"/s","type":"t"}`)
	if st := statusOf(t, b.URL, "t", "q"); st["state"] != "NoReceiver" || st["receiversWaiting"] != 0.0 {
		t.Errorf("an event and nobody receiving: %v", st)
	}
	act(t, b.URL, "t", "q", "pause", nil, http.StatusOK)
	answer := make(chan string, 1)
	go func() {
		_, _, rb := do(t, nil, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/q:receive?"+nsAPI+"&maxWaitTime=60", "", nil)
		answer <- string(rb)
	}()
	eventually(t, 10*time.Second, func() error {
		if st := statusOf(t, b.URL, "t", "q"); st["receiversWaiting"] != 1.0 || st["state"] != "Paused" || st["available"] != 1.0 {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	select {
	case rb := <-answer:
		t.Fatalf("a receive on a paused subscription answered %s", rb)
	default:
	}
	act(t, b.URL, "t", "q", "resume", nil, http.StatusOK)
	if rb := <-answer; !strings.Contains(rb, `"id":"a"`) {
		t.Errorf("the waiting receive got %s", rb)
	}
	if st := statusOf(t, b.URL, "t", "q"); st["state"] != "Delivering" || st["locked"] != 1.0 || st["lastReceiveTime"] == nil {
		t.Errorf("after the receive: %v", st)
	}
}

// TestActions_Purge: purge drops what waits, push and queue, counted as
// dropped with the reason Purged, and leaves a receiver's locked events.
func TestActions_Purge(t *testing.T) {
	t.Parallel()
	b := queueBroker(t, map[string]any{"receiveLockDurationInSeconds": 60, "maxDeliveryCount": 5}, []string{"q"},
		"broker__backoffIntervals", "1h,1h")
	k := newSwitchSink(t)
	createTopic(t, b.URL, "orders", "EventGridSchema")
	createSubscription(t, b.URL, "orders", "p", map[string]any{"destination": webhookDest(k.URL)})
	publish(t, b.URL, "orders", egEvents("o", 4))
	eventually(t, 10*time.Second, func() error {
		if st := statusOf(t, b.URL, "orders", "p"); st["inBackoff"] != 4.0 {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	if a := string(act(t, b.URL, "orders", "p", "purge", nil, http.StatusOK)); a != `{"purged":4}` {
		t.Errorf("push purge: %s", a)
	}
	wantFields(t, "purged", statusOf(t, b.URL, "orders", "p"), map[string]any{"inBackoff": 0, "dropped": 4, "state": "Failing"})

	for i := range 3 {
		publishCE(t, b.URL, fmt.Sprintf(`{"specversion":"1.0","id":"q%d","source":"/s","type":"t"}`, i))
	}
	receiveIDs(t, b.URL, "q", 1)
	if a := string(act(t, b.URL, "t", "q", "purge", nil, http.StatusOK)); a != `{"purged":2}` {
		t.Errorf("queue purge: %s", a)
	}
	wantFields(t, "purged", statusOf(t, b.URL, "t", "q"), map[string]any{"available": 0, "locked": 1, "dropped": 2})
	m := mustScrape(t, b.URL)
	m.mustValue(t, 4, "eventgrid_events_dropped_total", "topic", "orders", "subscription", "p", "reason", "Purged")
	m.mustValue(t, 2, "eventgrid_events_dropped_total", "topic", "t", "subscription", "q", "reason", "Purged")
}

// TestActions_Declared: on a declared subscription every action answers
// 409 as PUT does, naming the source; the declaration's "paused" pauses
// it, and a change of the declaration resumes it, live.
func TestActions_Declared(t *testing.T) {
	t.Parallel()
	k := newSink(t, nil)
	declare := func(paused bool) string {
		return mustJSON(t, map[string]any{
			"topics": map[string]any{"declared": map[string]any{}},
			"eventSubscriptions": map[string]any{"hot": map[string]any{"topic": "declared", "destination": webhookDest(k.URL),
				"paused": paused}},
		})
	}
	file := filepath.Join(t.TempDir(), "desired.json")
	if err := os.WriteFile(file, []byte(declare(true)), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, fastEnv("desired_config_file", file, "desired_config_pollIntervalInSeconds", "1"))
	waitReady(t, b)
	_, _, put := do(t, nil, http.MethodPut, subURLOf(b.URL, "declared", "hot"), "application/json",
		map[string]any{"properties": map[string]any{"destination": webhookDest(k.URL)}})
	for _, a := range []string{"redrive", "retryNow", "pause", "resume", "purge"} {
		if rb := act(t, b.URL, "declared", "hot", a, nil, http.StatusConflict); string(rb) != strings.TrimSpace(string(put)) {
			t.Errorf(":%s answered %s, want what PUT answers: %s", a, rb, put)
		}
	}
	if !strings.Contains(string(put), "desired_config_file "+file) {
		t.Errorf("the refusal does not name the source: %s", put)
	}
	publish(t, b.URL, "declared", egEvents("d", 2))
	wantFields(t, "declared paused", statusOf(t, b.URL, "declared", "hot"), map[string]any{"state": "Paused", "ready": 2})
	if err := os.WriteFile(file, []byte(declare(false)), 0o600); err != nil {
		t.Fatal(err)
	}
	k.waitAccepted(t, 2, 20*time.Second)
	if n := len(k.requests()); n == 0 {
		t.Error("nothing delivered")
	}
}
