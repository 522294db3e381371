package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// inspectScene is a broker with a topic whose subscriptions are healthy
// (200), failing (503, back-off of a minute) and dropping (400, which the
// CloudExponential schedule never retries), a topic without subscriptions,
// and a CloudEvents topic with a queue subscription.
type inspectScene struct {
	b                      *broker
	healthy, failing, drop *sink
}

func newInspectScene(t *testing.T, kv ...string) *inspectScene {
	t.Helper()
	s := &inspectScene{
		b: startBroker(t, merge(devEnv(), append([]string{
			"broker__backoffIntervals", "1m,1m",
			"api__eventStreamHeartbeatIntervalInSeconds", "1",
		}, kv...)...)),
		healthy: newSink(t, nil),
		failing: newSink(t, func(int, *http.Request) int { return http.StatusServiceUnavailable }),
		drop:    newSink(t, func(int, *http.Request) int { return http.StatusBadRequest }),
	}
	base := s.b.URL
	createTopic(t, base, "orders", "EventGridSchema")
	createSubscription(t, base, "orders", "healthy", map[string]any{"destination": webhookDest(s.healthy.URL)})
	createSubscription(t, base, "orders", "failing", map[string]any{"destination": webhookDest(s.failing.URL)})
	createSubscription(t, base, "orders", "dropping", map[string]any{"destination": webhookDest(s.drop.URL),
		"retryPolicy": map[string]any{"schedule": "CloudExponential"}})
	createTopic(t, base, "empty", "EventGridSchema")
	createTopic(t, base, "telemetry", "CloudEventSchemaV1_0")
	createSubscription(t, base, "telemetry", "reader", queueProps(map[string]any{"receiveLockDurationInSeconds": 60, "maxDeliveryCount": 5}))
	return s
}

// url is the broker's URL of path.
func (s *inspectScene) url(path string) string { return s.b.URL + path }

// get reads path (with the API version and query) into out and fails the
// test unless the broker answers 200.
func (s *inspectScene) get(t *testing.T, path, query string, out any) {
	t.Helper()
	body := mustDo(t, http.MethodGet, s.url(path)+"?"+apiVersion+query, "", nil, http.StatusOK)
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// status reads a subscription's deliveryStatus.
func (s *inspectScene) status(t *testing.T, topic, sub string) map[string]any {
	t.Helper()
	var r struct {
		Properties struct{ DeliveryStatus map[string]any }
	}
	s.get(t, "/topics/"+topic+"/eventSubscriptions/"+sub, "", &r)
	return r.Properties.DeliveryStatus
}

// wantFields fails the test unless m holds each of want's values; a nil
// value asks for the field to be absent, "set" for it to be present.
func wantFields(t *testing.T, what string, m map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		got, ok := m[k]
		switch {
		case v == nil && ok:
			t.Errorf("%s: %s = %v, want it left out", what, k, got)
		case v == "set" && (!ok || got == ""):
			t.Errorf("%s: %s missing", what, k)
		case v != nil && v != "set" && fmt.Sprint(got) != fmt.Sprint(v):
			t.Errorf("%s: %s = %v, want %v", what, k, got, v)
		}
	}
}

// TestInspection_KnownSequence publishes to a healthy, a failing and a
// dropping subscription and reads every view of the inspection API
// (docs/console.md): delivery status, topic statistics, peek (twice:
// nothing taken), given up, history, retry now; and the errors of bad
// parameters and of what does not exist. The broker's console page is off
// (console__enabled=false), which leaves the API as it is.
func TestInspection_KnownSequence(t *testing.T) {
	t.Parallel()
	s := newInspectScene(t, "console__enabled", "false")
	for _, p := range []string{"/console", "/console/", "/console/js/main.js"} {
		if code, _, _ := do(t, nil, http.MethodGet, s.url(p), "", nil); code != http.StatusNotFound {
			t.Errorf("GET %s with console__enabled=false = %d, want 404", p, code)
		}
	}
	publish(t, s.b.URL, "orders", egEvents("o", 3))
	publish(t, s.b.URL, "empty", egEvents("e", 2))
	mustDo(t, http.MethodPost, s.url("/topics/orders/events?"+apiVersion), "application/json", `[{"id":1}]`, http.StatusBadRequest)
	s.healthy.waitAccepted(t, 3, 10*time.Second)
	eventually(t, 10*time.Second, func() error {
		st, dr := s.status(t, "orders", "failing"), s.status(t, "orders", "dropping")
		if st["inBackoff"] != 3.0 || dr["dropped"] != 3.0 {
			return fmt.Errorf("failing %v, dropping %v", st, dr)
		}
		return nil
	})

	t.Run("DeliveryStatus", func(t *testing.T) {
		wantFields(t, "healthy", s.status(t, "orders", "healthy"), map[string]any{
			"state": "Idle", "delivered": 3, "failedAttempts": 0, "deadLettered": 0, "dropped": 0, "ready": 0, "inBackoff": 0,
			"lastSuccessTime": "set", "lastFailureTime": nil, "lastFailureStatusCode": nil, "oldestQueuedTime": nil, "nextAttemptTime": nil,
		})
		wantFields(t, "failing", s.status(t, "orders", "failing"), map[string]any{
			"state": "Failing", "delivered": 0, "failedAttempts": 3, "inBackoff": 3, "lastFailureStatusCode": 503,
			"lastFailureTime": "set", "lastError": "set", "nextAttemptTime": "set", "oldestQueuedTime": "set", "lastSuccessTime": nil,
		})
		wantFields(t, "dropping", s.status(t, "orders", "dropping"), map[string]any{
			"state": "Failing", "dropped": 3, "failedAttempts": 3, "deadLettered": 0, "lastFailureStatusCode": 400, "inBackoff": 0,
		})
		wantFields(t, "queue", s.status(t, "telemetry", "reader"), map[string]any{
			"state": "Idle", "available": 0, "locked": 0, "delayed": 0, "delivered": 0, "failedAttempts": 0, "ready": nil,
		})
	})

	t.Run("TopicStats", func(t *testing.T) {
		var orders, empty struct {
			Properties struct{ Stats map[string]any }
		}
		s.get(t, "/topics/orders", "", &orders)
		s.get(t, "/topics/empty", "", &empty)
		wantFields(t, "orders", orders.Properties.Stats, map[string]any{"received": 3, "unmatched": 0, "publishRequestsRefused": 1, "lastReceivedTime": "set"})
		wantFields(t, "empty", empty.Properties.Stats, map[string]any{"received": 2, "unmatched": 2, "publishRequestsRefused": 0})
		var list []struct {
			Properties struct{ Stats map[string]any }
		}
		s.get(t, "/topics", "", &list)
		if len(list) != 3 || list[0].Properties.Stats == nil {
			t.Errorf("GET /topics: %+v, want every topic with its stats", list)
		}
	})

	t.Run("Peek", func(t *testing.T) {
		type peeked struct {
			Value []struct {
				Event         map[string]any
				DeliveryState map[string]any
			}
			Total     int
			Truncated bool
		}
		for range 2 {
			var p peeked
			s.get(t, "/topics/orders/eventSubscriptions/failing/events", "", &p)
			if p.Total != 3 || len(p.Value) != 3 || p.Truncated {
				t.Fatalf("peek: %+v", p)
			}
			for i, v := range p.Value {
				if v.Event["id"] != fmt.Sprint("o", i) || v.Event["topic"] != "orders" {
					t.Errorf("peeked event %d: %v", i, v.Event)
				}
				wantFields(t, "deliveryState", v.DeliveryState, map[string]any{"queue": "backoff1", "attempts": 1,
					"enqueuedTime": "set", "nextAttemptTime": "set", "lastError": "set"})
			}
		}
		if st := s.status(t, "orders", "failing"); st["inBackoff"] != 3.0 || st["ready"] != 0.0 {
			t.Errorf("after peeking, the status is %v", st)
		}
		var p peeked
		s.get(t, "/topics/orders/eventSubscriptions/failing/events", "&top=1", &p)
		if p.Total != 3 || len(p.Value) != 1 || p.Value[0].Event["id"] != "o0" {
			t.Errorf("peek of the top 1: %+v", p)
		}
		s.get(t, "/topics/orders/eventSubscriptions/healthy/events", "", &p)
		if p.Total != 0 || len(p.Value) != 0 {
			t.Errorf("peek of an empty queue: %+v", p)
		}
	})

	t.Run("GivenUp", func(t *testing.T) {
		var f struct {
			Value []map[string]any
			Total int
		}
		s.get(t, "/topics/orders/eventSubscriptions/dropping/failures", "", &f)
		if f.Total != 3 || len(f.Value) != 3 {
			t.Fatalf("failures: %+v", f)
		}
		for _, v := range f.Value {
			wantFields(t, "given up", v, map[string]any{"outcome": "dropped", "reason": "UndeliverableDueToHttpBadRequest",
				"attempts": 1, "lastStatusCode": 400, "time": "set", "lastError": "set", "eventBytes": "set"})
			if ev, _ := v["event"].(map[string]any); ev["id"] != v["eventId"] {
				t.Errorf("given up: event %v, eventId %v", v["event"], v["eventId"])
			}
		}
		s.get(t, "/topics/orders/eventSubscriptions/dropping/failures", "&top=2", &f)
		if f.Total != 3 || len(f.Value) != 2 {
			t.Errorf("failures with top=2: %d of %d", len(f.Value), f.Total)
		}
		s.get(t, "/topics/orders/eventSubscriptions/healthy/failures", "", &f)
		if f.Total != 0 || len(f.Value) != 0 {
			t.Errorf("a healthy subscription's failures: %+v", f)
		}
	})

	t.Run("History", func(t *testing.T) {
		var sub struct {
			Start           time.Time
			IntervalSeconds int
			Series          map[string][]*float64
		}
		s.get(t, "/topics/orders/eventSubscriptions/healthy/history", "", &sub)
		sum := func(vs []*float64) (n float64, points int) {
			for _, v := range vs {
				if v != nil {
					n += *v
					points++
				}
			}
			return n, points
		}
		if sub.IntervalSeconds != 5 || sub.Start.Unix()%5 != 0 || time.Since(sub.Start) > 15*time.Minute {
			t.Errorf("history starts %v, every %d s", sub.Start, sub.IntervalSeconds)
		}
		for _, name := range []string{"delivered", "failed", "givenUp", "queued", "latencyP50Ms", "latencyP99Ms"} {
			if len(sub.Series[name]) != 180 {
				t.Errorf("series %s has %d points, want 180", name, len(sub.Series[name]))
			}
		}
		if n, _ := sum(sub.Series["delivered"]); n != 3 {
			t.Errorf("history: %v delivered, want 3", n)
		}
		if _, points := sum(sub.Series["latencyP50Ms"]); points == 0 {
			t.Error("history: no delivery latency")
		}
		s.get(t, "/topics/orders/eventSubscriptions/dropping/history", "", &sub)
		if n, _ := sum(sub.Series["givenUp"]); n != 3 {
			t.Errorf("history: %v given up, want 3", n)
		}
		var topic struct{ Series map[string][]float64 }
		s.get(t, "/topics/empty/history", "", &topic)
		if n, _ := sum(toPtrs(topic.Series["received"])); n != 2 {
			t.Errorf("topic history: %v received, want 2", n)
		}
		if n, _ := sum(toPtrs(topic.Series["unmatched"])); n != 2 {
			t.Errorf("topic history: %v unmatched, want 2", n)
		}
	})

	t.Run("RetryNow", func(t *testing.T) {
		before := len(s.failing.requests())
		body := mustDo(t, http.MethodPost, s.url("/topics/orders/eventSubscriptions/failing:retryNow?"+apiVersion), "", nil, http.StatusOK)
		if strings.TrimSpace(string(body)) != `{"moved":3,"atLastAttempt":0}` {
			t.Errorf("retry now: %s", body)
		}
		eventually(t, 10*time.Second, func() error {
			if n := len(s.failing.requests()); n < before+3 {
				return fmt.Errorf("%d requests since retry now, want 3", n-before)
			}
			return nil
		})
		eventually(t, 10*time.Second, func() error {
			if st := s.status(t, "orders", "failing"); st["failedAttempts"] != 6.0 || st["inBackoff"] != 3.0 {
				return fmt.Errorf("status %v", st)
			}
			return nil
		})
		var p struct {
			Value []struct{ DeliveryState map[string]any }
		}
		s.get(t, "/topics/orders/eventSubscriptions/failing/events", "", &p)
		// A forced attempt that fails does not count
		// (docs/delivery.md#retry-now): the events wait as they did.
		for _, v := range p.Value {
			if v.DeliveryState["attempts"] != 1.0 || v.DeliveryState["maxAttempts"] != 30.0 || v.DeliveryState["queue"] != "backoff1" {
				t.Errorf("after retry now: %v, want the forced attempt not counted", v.DeliveryState)
			}
		}
		body = mustDo(t, http.MethodPost, s.url("/topics/orders/eventSubscriptions/healthy:RETRYNOW?"+apiVersion), "", nil, http.StatusOK)
		if strings.TrimSpace(string(body)) != `{"moved":0,"atLastAttempt":0}` {
			t.Errorf("retry now with nothing waiting: %s", body)
		}
	})

	t.Run("Queue", func(t *testing.T) { s.queueViews(t) })
	t.Run("Errors", func(t *testing.T) { s.errors(t) })
}

func toPtrs(vs []float64) []*float64 {
	out := make([]*float64, len(vs))
	for i := range vs {
		out[i] = &vs[i]
	}
	return out
}

// queueViews: a queue subscription's status, peek and retry now, through
// receive and a delayed release.
func (s *inspectScene) queueViews(t *testing.T) {
	mustDo(t, http.MethodPost, s.url("/topics/telemetry/events?"+apiVersion), "application/cloudevents-batch+json",
		`[{"specversion":"1.0","id":"c1","source":"s","type":"t"},{"specversion":"1.0","id":"c2","source":"s","type":"t"}]`, http.StatusOK)
	const ns = "api-version=2024-06-01"
	var got struct {
		Value []struct{ BrokerProperties struct{ LockToken string } }
	}
	body := mustDo(t, http.MethodPost, s.url("/topics/telemetry/eventSubscriptions/reader:receive?"+ns+"&maxEvents=1"), "", nil, http.StatusOK)
	if err := json.Unmarshal(body, &got); err != nil || len(got.Value) != 1 {
		t.Fatalf("receive: %v %s", err, body)
	}
	var p struct {
		Value []struct {
			Event         map[string]any
			DeliveryState map[string]any
		}
		Total int
	}
	s.get(t, "/topics/telemetry/eventSubscriptions/reader/events", "", &p)
	if p.Total != 2 || len(p.Value) != 2 || p.Value[0].DeliveryState["queue"] != "locked" || p.Value[1].DeliveryState["queue"] != "available" ||
		p.Value[0].Event["id"] != "c1" || p.Value[0].DeliveryState["nextAttemptTime"] == nil {
		t.Errorf("queue peek: %+v", p)
	}
	mustDo(t, http.MethodPost, s.url("/topics/telemetry/eventSubscriptions/reader:release?"+ns+"&releaseDelayInSeconds=600"),
		"application/json", map[string]any{"lockTokens": []string{got.Value[0].BrokerProperties.LockToken}}, http.StatusOK)
	wantFields(t, "queue", s.status(t, "telemetry", "reader"), map[string]any{
		"state": "Retrying", "available": 1, "delayed": 1, "failedAttempts": 1, "nextAttemptTime": "set", "oldestQueuedTime": "set",
	})
	body = mustDo(t, http.MethodPost, s.url("/topics/telemetry/eventSubscriptions/reader:retryNow?"+apiVersion), "", nil, http.StatusOK)
	if strings.TrimSpace(string(body)) != `{"moved":1,"atLastAttempt":0}` {
		t.Errorf("queue retry now: %s", body)
	}
	wantFields(t, "queue", s.status(t, "telemetry", "reader"), map[string]any{"state": "Delivering", "available": 2, "delayed": 0})
}

// errors: bad parameters get 400 naming them, what does not exist 404,
// and the wrong method or api-version the usual answers.
func (s *inspectScene) errors(t *testing.T) {
	tests := []struct {
		name, method, path, query string
		status                    int
		code, msg                 string
	}{
		{"TopZero", "GET", "/topics/orders/eventSubscriptions/failing/events", "&top=0", 400, "BadRequest", `The query parameter top must be an integer between 1 and 1000; got "0".`},
		{"TopTooLarge", "GET", "/topics/orders/eventSubscriptions/failing/events", "&top=1001", 400, "BadRequest", "top must be an integer between 1 and 1000"},
		{"TopNotANumber", "GET", "/topics/orders/eventSubscriptions/dropping/failures", "&top=ten", 400, "BadRequest", `got "ten"`},
		{"NoTopicHistory", "GET", "/topics/nope/history", "", 404, "TopicNotFound", `"nope"`},
		{"NoTopicTail", "GET", "/topics/nope/events", "", 404, "TopicNotFound", `"nope"`},
		{"NoSubPeek", "GET", "/topics/orders/eventSubscriptions/nope/events", "", 404, "SubscriptionNotFound", `"nope"`},
		{"NoSubFailures", "GET", "/topics/orders/eventSubscriptions/nope/failures", "", 404, "SubscriptionNotFound", `"nope"`},
		{"NoSubDeliveries", "GET", "/topics/orders/eventSubscriptions/nope/deliveries", "", 404, "SubscriptionNotFound", `"nope"`},
		{"NoSubHistory", "GET", "/topics/nope/eventSubscriptions/s/history", "", 404, "TopicNotFound", `"nope"`},
		{"NoSubRetry", "POST", "/topics/orders/eventSubscriptions/nope:retryNow", "", 404, "SubscriptionNotFound", `"nope"`},
		{"UnknownView", "GET", "/topics/orders/eventSubscriptions/failing/unknown", "", 404, "NotFound", "No API matches this path."},
		{"ViewBeyond", "GET", "/topics/orders/eventSubscriptions/failing/events/x", "", 404, "NotFound", "No API matches this path."},
		{"RetryByGet", "GET", "/topics/orders/eventSubscriptions/failing:retryNow", "", 405, "MethodNotAllowed", ":retryNow takes POST only."},
		{"PeekByPost", "POST", "/topics/orders/eventSubscriptions/failing/events", "", 405, "MethodNotAllowed", ""},
		{"RewrittenPathItself", "GET", "/topics/orders/eventSubscriptions/$history/failing", "", 404, "NotFound", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, body := do(t, nil, tt.method, s.url(tt.path)+"?"+apiVersion+tt.query, "", nil)
			var e struct {
				Error struct {
					Details struct{ Code, Message string }
				}
			}
			_ = json.Unmarshal(body, &e)
			if d := e.Error.Details; code != tt.status || d.Code != tt.code || !strings.Contains(d.Message, tt.msg) {
				t.Errorf("%s %s = %d %s; want %d %s %q", tt.method, tt.path, code, body, tt.status, tt.code, tt.msg)
			}
		})
	}
	// The namespace api-versions are the namespace routes': these take
	// the edge ones.
	code, _, body := do(t, nil, http.MethodPost, s.url("/topics/orders/eventSubscriptions/failing:retryNow?api-version=2024-06-01"), "", nil)
	if code != http.StatusBadRequest || !strings.Contains(string(body), "InvalidApiVersion") {
		t.Errorf("retry now with a namespace api-version: %d %s", code, body)
	}
}
