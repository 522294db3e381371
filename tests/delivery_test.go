package tests_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fastEnv shortens the back-off schedule so retries can be tested in
// seconds.
func fastEnv(kv ...string) map[string]string {
	return merge(devEnv(), append([]string{"broker__backoffIntervals", "200ms,500ms"}, kv...)...)
}

func TestDelivery_RetrySchedule(t *testing.T) {
	// Serial (see doc.go): retry gaps within 2 s of the schedule.
	b := startBroker(t, fastEnv())
	k := newSink(t, func(n int, _ *http.Request) int {
		if n <= 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(k.URL + "/hook")})
	publish(t, b.URL, "t", egEvents("e", 1))
	k.waitAccepted(t, 1, 10*time.Second)

	reqs := k.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d attempts, want 4 (three failures, then success)", len(reqs))
	}
	want := []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}
	for i, w := range want {
		gap := reqs[i+1].at.Sub(reqs[i].at)
		if gap < w || gap > w+2*time.Second {
			t.Errorf("gap before attempt %d = %v, want %v", i+2, gap, w)
		}
		if got := reqs[i+1].header.Get("aeg-delivery-count"); got != strconv.Itoa(i+1) {
			t.Errorf("attempt %d aeg-delivery-count = %s, want %d", i+2, got, i+1)
		}
	}
	if n := len(b.Logs("delivery attempt failed")); n != 3 {
		t.Errorf("%d failure log lines, want 3", n)
	}
}

func TestDelivery_RetryPolicy(t *testing.T) {
	// Serial (see doc.go): attempts within 1.5 s of the publish, for a time to live of 1 s.
	t.Run("MaxDeliveryAttempts", func(t *testing.T) {
		b := startBroker(t, fastEnv())
		k := newSink(t, func(int, *http.Request) int { return http.StatusInternalServerError })
		createTopic(t, b.URL, "t", "EventGridSchema")
		createSubscription(t, b.URL, "t", "s", map[string]any{
			"destination": webhookDest(k.URL),
			"retryPolicy": map[string]any{"maxDeliveryAttempts": 3},
		})
		publish(t, b.URL, "t", egEvents("e", 1))
		eventually(t, 10*time.Second, func() error {
			if n := len(b.Logs("event dropped by retry policy")); n != 1 {
				return fmt.Errorf("%d drop log lines", n)
			}
			return nil
		})
		drop := b.Logs("event dropped by retry policy")[0]
		if drop["reason"] != "MaxDeliveryAttemptsExceeded" || drop["eventId"] != "e0" || drop["subscription"] != "s" {
			t.Errorf("drop log line %v", drop)
		}
		if n := len(k.requests()); n != 3 {
			t.Errorf("%d attempts, want 3", n)
		}
	})

	t.Run("TimeToLive", func(t *testing.T) {
		// The module default TTL (1 s) with the default 30 attempts: the
		// TTL ends it first.
		b := startBroker(t, fastEnv("broker__defaultEventTimeToLiveInSeconds", "1"))
		k := newSink(t, func(int, *http.Request) int { return http.StatusInternalServerError })
		createTopic(t, b.URL, "t", "EventGridSchema")
		createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(k.URL)})
		start := time.Now()
		publish(t, b.URL, "t", egEvents("e", 1))
		eventually(t, 10*time.Second, func() error {
			if n := len(b.Logs("event dropped by retry policy")); n != 1 {
				return fmt.Errorf("%d drop log lines", n)
			}
			return nil
		})
		if r := b.Logs("event dropped by retry policy")[0]["reason"]; r != "TimeToLiveExceeded" {
			t.Errorf("reason %v, want TimeToLiveExceeded", r)
		}
		for _, r := range k.requests() {
			if r.at.Sub(start) > 1500*time.Millisecond {
				t.Errorf("attempt %v after publish, past the 1 s TTL", r.at.Sub(start))
			}
		}
	})
}

func TestDelivery_Requests(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv())
	k := newSink(t, nil)
	createTopic(t, b.URL, "eg", "EventGridSchema")
	createTopic(t, b.URL, "custom", "CustomEventSchema")
	createTopic(t, b.URL, "ce", "CloudEventSchemaV1_0")
	createSubscription(t, b.URL, "eg", "egSub", map[string]any{"destination": webhookDest(k.URL + "/eg")})
	createSubscription(t, b.URL, "custom", "customSub", map[string]any{"destination": webhookDest(k.URL + "/custom")})
	createSubscription(t, b.URL, "ce", "ceSub", map[string]any{"destination": webhookDest(k.URL + "/ce")})

	// PascalCase input as the C# SDK sends it.
	mustDo(t, http.MethodPost, b.URL+"/topics/eg/events?"+apiVersion, "application/json",
		`[{"Id":"1","Subject":"/a","EventType":"T","EventTime":"2026-01-01T00:00:00Z","DataVersion":"2.0","Data":{"x":1}}]`, 200)
	custom := `[ {"b":2,  "a" : [1, 2.50]} ]`
	mustDo(t, http.MethodPost, b.URL+"/topics/custom/events?"+apiVersion, "application/json", custom, 200)
	mustDo(t, http.MethodPost, b.URL+"/topics/ce/events?"+apiVersion, "application/cloudevents+json",
		`{"specVersion":"1.0","id":"c1","source":"/src","type":"T","data":{"x":1}}`, 200)

	eventually(t, 10*time.Second, func() error {
		if n := len(k.requests()); n != 3 {
			return fmt.Errorf("%d requests", n)
		}
		return nil
	})
	byPath := map[string]received{}
	for _, r := range k.requests() {
		byPath[r.header.Get("aeg-subscription-name")] = r
	}
	eg := byPath["egSub"]
	if eg.header.Get("Content-Type") != "application/json; charset=utf-8" || eg.header.Get("aeg-event-type") != "Notification" ||
		eg.header.Get("aeg-delivery-count") != "0" || eg.header.Get("aeg-metadata-version") != "1" || eg.header.Get("aeg-data-version") != "2.0" {
		t.Errorf("EventGridSchema headers: %v", eg.header)
	}
	want := `[{"id":"1","topic":"eg","subject":"/a","eventType":"T","eventTime":"2026-01-01T00:00:00Z","data":{"x":1},"dataVersion":"2.0","metadataVersion":"1"}]`
	if string(eg.body) != want {
		t.Errorf("EventGridSchema body\n got %s\nwant %s", eg.body, want)
	}
	if got := string(byPath["customSub"].body); got != `[{"b":2,  "a" : [1, 2.50]}]` {
		t.Errorf("custom event not delivered byte-for-byte: %s", got)
	}
	ce := byPath["ceSub"]
	if ce.header.Get("Content-Type") != "application/cloudevents-batch+json; charset=utf-8" {
		t.Errorf("CloudEvents Content-Type %q", ce.header.Get("Content-Type"))
	}
	var ces []map[string]any
	_ = json.Unmarshal(ce.body, &ces)
	if len(ces) != 1 || ces[0]["specversion"] != "1.0" || ces[0]["id"] != "c1" {
		t.Errorf("CloudEvents body %s", ce.body)
	}
}

func TestDelivery_Batching(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv())
	release := make(chan struct{})
	var once sync.Once
	k := newSink(t, func(n int, r *http.Request) int {
		if n == 1 {
			<-release // hold the first request so the rest queue up
		}
		return http.StatusOK
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{
		"destination": webhookDest(k.URL, "maxEventsPerBatch", 4),
	})
	publish(t, b.URL, "t", egEvents("first", 1))
	eventually(t, 5*time.Second, func() error {
		if len(k.requests()) == 0 {
			return fmt.Errorf("first request not arrived")
		}
		return nil
	})
	publish(t, b.URL, "t", egEvents("e", 10))
	once.Do(func() { close(release) })
	k.waitAccepted(t, 11, 10*time.Second)
	for _, r := range k.requests()[1:] {
		var evs []any
		_ = json.Unmarshal(r.body, &evs)
		if len(evs) > 4 {
			t.Errorf("batch of %d events, cap is 4", len(evs))
		}
	}
	if n := len(k.requests()); n > 5 {
		t.Errorf("%d requests for 11 events with batches of 4; batching did not happen", n)
	}
}

func TestDelivery_HangingSubscriberIsolated(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__deliverTimeoutInSeconds", "30"))
	hang := make(chan struct{})
	hung := newSink(t, func(int, *http.Request) int { <-hang; return http.StatusOK })
	t.Cleanup(func() { close(hang) })
	healthy := newSink(t, nil)
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "hung", map[string]any{"destination": webhookDest(hung.URL)})
	createSubscription(t, b.URL, "t", "healthy", map[string]any{"destination": webhookDest(healthy.URL)})
	for i := range 20 {
		publish(t, b.URL, "t", egEvents(fmt.Sprint("b", i, "-"), 10))
	}
	healthy.waitAccepted(t, 200, 10*time.Second)
}

func TestDelivery_BackPressure(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__maxQueuedEvents", "50", "broker__backoffIntervals", "300ms,300ms"))
	var mu sync.Mutex
	down := true
	k := newSink(t, func(int, *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(k.URL)})

	accepted := 0
	var retryAfter string
	for i := 0; i < 100; i++ {
		code, h, body := do(t, nil, http.MethodPost, b.URL+"/topics/t/events?"+apiVersion, "application/json", egEvents(fmt.Sprint("r", i, "-"), 3))
		if code == http.StatusServiceUnavailable {
			retryAfter = h.Get("Retry-After")
			var env struct{ Error struct{ Code string } }
			_ = json.Unmarshal(body, &env)
			if env.Error.Code != "ServiceUnavailable" {
				t.Errorf("503 body %s", body)
			}
			break
		}
		if code != http.StatusOK {
			t.Fatalf("publish %d = %d: %s", i, code, body)
		}
		accepted += 3
	}
	if retryAfter == "" {
		t.Fatal("publishing never got 503 with Retry-After at the queue limit")
	}
	if accepted != 48 {
		t.Errorf("accepted %d events before the limit of 50, want 48 (16 requests of 3; the 17th is refused whole)", accepted)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	got := k.waitAccepted(t, accepted, 15*time.Second)
	if len(got) != accepted {
		t.Errorf("delivered %d distinct events, want exactly the %d accepted: nothing partial may be queued", len(got), accepted)
	}
	publish(t, b.URL, "t", egEvents("after", 3))
	k.waitAccepted(t, accepted+3, 10*time.Second)
}

// TestDelivery_Conservation publishes thousands of events to several
// subscriptions whose subscribers fail at random, one of them black-holed
// (connections accepted, never answered) while the events are published,
// and checks that every (event, subscription) pair ends delivered or
// dropped by the retry policy with a log line: none vanishes.
func TestDelivery_Conservation(t *testing.T) {
	// Serial (see doc.go): a subscriber's 200 must reach the broker within its 1 s delivery timeout, or the event counts twice.
	b := startBroker(t, fastEnv(
		"broker__backoffIntervals", "50ms,100ms",
		"broker__defaultMaxDeliveryAttempts", "3",
		"broker__deliverTimeoutInSeconds", "1",
		"broker__logDeliveryFailure", "false",
		"metrics__reporterType", "prometheus"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	const subs, n = 4, 2000
	sinks := make([]*sink, subs)
	hole := newBlackhole(t)
	for i := range sinks {
		if i == subs-1 {
			sinks[i] = hole.sink
			createSubscription(t, b.URL, "t", fmt.Sprint("s", i), map[string]any{"destination": webhookDest(hole.URL, "maxEventsPerBatch", 50)})
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		var mu sync.Mutex
		sinks[i] = newSink(t, func(int, *http.Request) int {
			mu.Lock()
			defer mu.Unlock()
			if rng.IntN(100) < 35 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		dest := webhookDest(sinks[i].URL)
		if i == 0 {
			dest = webhookDest(sinks[i].URL, "maxEventsPerBatch", 20)
		}
		createSubscription(t, b.URL, "t", fmt.Sprint("s", i), map[string]any{"destination": dest})
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n/10; i += 4 {
				publish(t, b.URL, "t", egEvents(fmt.Sprint(i, "-"), 10))
			}
		}()
	}
	wg.Wait()
	hole.restore()
	// Every (event, subscription) pair must end delivered, or dropped by
	// the retry policy and counted.
	eventually(t, 60*time.Second, func() error {
		s := mustScrape(t, b.URL)
		if q, _ := s.value("eventgrid_queued_events"); q != 0 {
			return fmt.Errorf("%v deliveries still queued", q)
		}
		total := 0
		for i, k := range sinks {
			dropped, _ := s.value("eventgrid_subscription_expired_total", "subscription", fmt.Sprint("s", i))
			total += len(k.accepted(t)) + int(dropped)
		}
		if total != subs*n {
			return fmt.Errorf("%d of %d (event, subscription) pairs delivered or counted as dropped", total, subs*n)
		}
		return nil
	})
	// The unbatched subscriptions make about 2,000 independent tries each at
	// 35 % failure, so some events must run out of attempts; s0 batches, so
	// its few chains of tries may all succeed in time.
	for i := 1; i < subs-1; i++ {
		if d, _ := mustScrape(t, b.URL).value("eventgrid_subscription_expired_total", "subscription", fmt.Sprint("s", i)); d == 0 {
			t.Errorf("s%d: nothing dropped; the failure rate is too low to exercise the retry policy", i)
		}
	}
}

func TestDelivery_Shutdown(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__backoffIntervals", "1h,1h", "broker__stopTimeoutInSeconds", "5"))
	k := newSink(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(k.URL)})
	publish(t, b.URL, "t", egEvents("e", 7))
	eventually(t, 10*time.Second, func() error {
		if n := len(k.requests()); n != 7 {
			return fmt.Errorf("%d first attempts", n)
		}
		return nil
	})
	b.Stop()
	logs := b.Logs("delivery stopped; queued events are not persisted by design")
	if len(logs) != 1 || logs[0]["discarded"] != float64(7) {
		t.Errorf("shutdown log %v, want 7 discarded", logs)
	}
}

func TestDelivery_DeleteDiscardsQueue(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__backoffIntervals", "1h,1h"))
	k := newSink(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(k.URL)})
	publish(t, b.URL, "t", egEvents("e", 4))
	// Wait until all four wait in back-off, as the subscription's
	// deliveryStatus reports.
	eventually(t, 10*time.Second, func() error {
		var sub struct {
			Properties struct {
				DeliveryStatus struct {
					InBackoff int    `json:"inBackoff"`
					LastError string `json:"lastError"`
				} `json:"deliveryStatus"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(mustDo(t, http.MethodGet, b.URL+"/topics/t/eventSubscriptions/s?"+apiVersion, "", nil, 200), &sub)
		if ds := sub.Properties.DeliveryStatus; ds.InBackoff != 4 || !strings.Contains(ds.LastError, "500") {
			return fmt.Errorf("deliveryStatus %+v", ds)
		}
		return nil
	})
	mustDo(t, http.MethodDelete, b.URL+"/topics/t?"+apiVersion, "", nil, http.StatusOK)
	eventually(t, 5*time.Second, func() error {
		logs := b.Logs("event subscription deleted; its queued events were discarded")
		if len(logs) != 1 || logs[0]["events"] != float64(4) {
			return fmt.Errorf("delete log %v, want 4 events", logs)
		}
		return nil
	})
}

// TestDelivery_EventGridForwarding forwards events from one broker to a
// second one playing the cloud Event Grid topic, over HTTPS with the
// destination's SAS key, as an EventGrid destination does.
func TestDelivery_EventGridForwarding(t *testing.T) {
	t.Parallel()
	const key = "Y2xvdWQtdG9waWMta2V5"
	cloud := startBroker(t, merge(devEnv(),
		"inbound__serverAuth__tlsPolicy", "enabled",
		"inbound__clientAuth__sasKeys__enabled", "true",
		"inbound__clientAuth__sasKeys__key1", key))
	k := newSink(t, nil)
	cloudAPI := func(method, path string, body any, want int) {
		t.Helper()
		code, _, rb := do(t, nil, method, cloud.URL+path, "application/json", body, "aeg-sas-key", key)
		if code != want {
			t.Fatalf("%s %s = %d: %s", method, path, code, rb)
		}
	}
	cloudAPI(http.MethodPut, "/topics/cloudTopic?"+apiVersion, map[string]any{}, 200)
	cloudAPI(http.MethodPut, "/topics/cloudTopic/eventSubscriptions/out?"+apiVersion,
		map[string]any{"properties": map[string]any{"destination": webhookDest(k.URL)}}, 200)

	edge := startBroker(t, fastEnv("outbound__eventgrid__allowInvalidHostnames", "true"))
	createTopic(t, edge.URL, "local", "EventGridSchema")
	forward := func(name, topicName string) {
		props := map[string]any{
			"endpointUrl": cloud.TLS + "/topics/cloudTopic/api/events?api-version=2018-01-01",
			"sasKey":      key,
		}
		if topicName != "" {
			props["topicName"] = topicName
		}
		createSubscription(t, edge.URL, "local", name, map[string]any{
			"destination": map[string]any{"endpointType": "EventGrid", "properties": props},
			"filter":      map[string]any{"subjectBeginsWith": "/" + name},
		})
	}
	forward("named", "cloudTopic") // topic rewritten to topicName
	forward("nulled", "")          // topic sent as null

	evs := egEvents("fwd", 2)
	evs[0]["subject"], evs[1]["subject"] = "/named/1", "/nulled/1"
	publish(t, edge.URL, "local", evs)
	k.waitAccepted(t, 2, 15*time.Second)
	for _, r := range k.requests() {
		var got []map[string]any
		_ = json.Unmarshal(r.body, &got)
		for _, ev := range got {
			if ev["topic"] != "cloudTopic" {
				t.Errorf("event %v arrived with topic %v", ev["id"], ev["topic"])
			}
		}
	}

	t.Run("WrongKeyIsRetried", func(t *testing.T) {
		createSubscription(t, edge.URL, "local", "badkey", map[string]any{
			"destination": map[string]any{"endpointType": "EventGrid", "properties": map[string]any{
				"endpointUrl": cloud.TLS + "/topics/cloudTopic/api/events?api-version=2018-01-01", "sasKey": "wrong"}},
			"filter": map[string]any{"subjectBeginsWith": "/badkey"},
		})
		ev := egEvents("bk", 1)
		ev[0]["subject"] = "/badkey/1"
		publish(t, edge.URL, "local", ev)
		eventually(t, 10*time.Second, func() error {
			for _, l := range edge.Logs("delivery attempt failed") {
				if l["subscription"] == "badkey" && strings.Contains(fmt.Sprint(l["error"]), "401") {
					return nil
				}
			}
			return fmt.Errorf("no 401 failure logged for the wrong key")
		})
		if strings.Contains(edge.Output(), key) {
			t.Error("the edge broker logged the destination's SAS key")
		}
	})

	t.Run("URLRules", func(t *testing.T) {
		for name, url := range map[string]string{
			"NotAPIEvents": cloud.TLS + "/topics/cloudTopic/events?api-version=2018-01-01",
			"WrongVersion": cloud.TLS + "/topics/cloudTopic/api/events?api-version=2019-01-01",
			"PlainHTTP":    cloud.URL + "/topics/cloudTopic/api/events?api-version=2018-01-01",
		} {
			code, _, body := do(t, nil, http.MethodPut, edge.URL+"/topics/local/eventSubscriptions/x?"+apiVersion, "application/json",
				map[string]any{"properties": map[string]any{"destination": map[string]any{"endpointType": "EventGrid",
					"properties": map[string]any{"endpointUrl": url, "sasKey": "k"}}}})
			if code != 400 || !strings.Contains(string(body), "InvalidDestination") {
				t.Errorf("%s: %d %s", name, code, body)
			}
		}
	})
}
