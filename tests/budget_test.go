package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// budgetTopics creates three CloudEvents topics on b: "push" with webhook
// subscriptions to a subscriber that never accepts (retried in an hour),
// "queue" with queue subscriptions, and "both" with one of each; the first
// two have n subscriptions.
func budgetTopics(t *testing.T, b *broker, n int) {
	t.Helper()
	dead := newSink(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	for _, topic := range []string{"push", "queue", "both"} {
		createTopic(t, b.URL, topic, "CloudEventSchemaV1_0")
	}
	for i := range n {
		createSubscription(t, b.URL, "push", fmt.Sprint("hook", i), map[string]any{"destination": webhookDest(dead.URL)})
		createSubscription(t, b.URL, "queue", fmt.Sprint("queue", i), queueProps(nil))
	}
	createSubscription(t, b.URL, "both", "bothhook", map[string]any{"destination": webhookDest(dead.URL)})
	createSubscription(t, b.URL, "both", "bothqueue", queueProps(nil))
}

// publishBatch publishes n CloudEvents to topic with :publish and returns
// the answer's status, Retry-After and error message.
func publishBatch(t *testing.T, b *broker, topic, prefix string, n int) (int, string, string) {
	t.Helper()
	var evs []string
	for i := range n {
		evs = append(evs, bigEvent(fmt.Sprint(prefix, i), 200))
	}
	code, h, body := do(t, nil, http.MethodPost, b.URL+"/topics/"+topic+":publish?"+nsAPI, "application/cloudevents-batch+json",
		"["+strings.Join(evs, ",")+"]")
	var env struct {
		Error struct{ Details struct{ Message string } }
	}
	_ = json.Unmarshal(body, &env)
	return code, h.Get("Retry-After"), env.Error.Details.Message
}

// TestBudget_BrokerWideWhateverTheMode: a request over the broker-wide
// bound (broker__maxQueuedEvents) gets 413, without Retry-After, naming the
// bound, whether its subscriptions deliver by push, from a queue, or both,
// and nothing of it is queued; with the broker full, every mode gets 503
// with Retry-After. Before, a queue subscription answered 503 to a request
// that could never fit, which publishers retry forever.
func TestBudget_BrokerWideWhateverTheMode(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "metrics__reporterType", "prometheus", "broker__backoffIntervals", "1h,1h",
		"broker__maxQueuedEvents", "8", "broker__maxQueuedEventsPerSubscription", "5"))
	budgetTopics(t, b, 2)
	for _, topic := range []string{"push", "queue", "both"} {
		// 5 events for 2 subscriptions: 10 deliveries, within each share,
		// more than the broker ever holds.
		code, retry, msg := publishBatch(t, b, topic, "five", 5)
		if code != http.StatusRequestEntityTooLarge || retry != "" || !strings.Contains(msg, "broker__maxQueuedEvents 8") {
			t.Errorf("%s, 10 deliveries: %d Retry-After %q %q; want 413 naming broker__maxQueuedEvents", topic, code, retry, msg)
		}
	}
	s := mustScrape(t, b.URL)
	if v, _ := s.value("eventgrid_queued_events"); v != 0 {
		t.Errorf("eventgrid_queued_events = %v after refusals; want 0", v)
	}
	if v, _ := s.value("eventgrid_publish_rejected_total", "reason", "too_large"); v != 3 {
		t.Errorf("eventgrid_publish_rejected_total{reason=too_large} = %v; want the 3 refused requests", v)
	}
	// The broker full: 8 deliveries held.
	if code, _, msg := publishBatch(t, b, "both", "fill", 4); code != http.StatusOK {
		t.Fatalf("filling the broker: %d %s", code, msg)
	}
	for _, topic := range []string{"push", "queue", "both"} {
		code, retry, msg := publishBatch(t, b, topic, "more", 1)
		if code != http.StatusServiceUnavailable || retry == "" || !strings.Contains(msg, "The broker holds its limit") {
			t.Errorf("%s with the broker full: %d Retry-After %q %q; want 503 with Retry-After", topic, code, retry, msg)
		}
	}
	if v, _ := mustScrape(t, b.URL).value("eventgrid_publish_rejected_total", "reason", "broker_full"); v != 3 {
		t.Errorf("eventgrid_publish_rejected_total{reason=broker_full} = %v; want the 3 refused requests", v)
	}
}

// TestBudget_NeverFitsBelowBodySize: with broker__maxQueuedBytes below
// api__maxContentLengthInBytes, a request whose body alone is more than
// the broker ever queues gets 413 without Retry-After, naming the key, on
// an empty broker, push or queue, before its body is read (503 would have
// its publisher retry it for ever); one that fits only later gets 503 with
// Retry-After. Every refusal counts in eventgrid_publish_rejected_total
// with its reason, the broker-wide ones refused before the body is read
// too.
func TestBudget_NeverFitsBelowBodySize(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "metrics__reporterType", "prometheus", "broker__backoffIntervals", "1h,1h",
		"broker__maxQueuedBytes", "300000", "broker__maxQueuedBytesPerSubscription", "300000",
		"broker__publishHoldInMilliseconds", "0"))
	budgetTopics(t, b, 1)
	for _, topic := range []string{"push", "queue", "both"} {
		code, retry, msg := publishBatch(t, b, topic, "big", 2000) // 2000 events of 200 bytes: about 400 KB
		if code != http.StatusRequestEntityTooLarge || retry != "" || !strings.Contains(msg, "broker__maxQueuedBytes 300000") {
			t.Errorf("%s, 400 KB on an empty broker of 300 KB: %d Retry-After %q %q; want 413 naming broker__maxQueuedBytes", topic, code, retry, msg)
		}
	}
	// 200 KB held for the dead subscriber: another 200 KB fits only later.
	if code, _, msg := publishBatch(t, b, "push", "fill", 1000); code != http.StatusOK {
		t.Fatalf("filling the broker: %d %s", code, msg)
	}
	code, retry, msg := publishBatch(t, b, "push", "more", 1000)
	if code != http.StatusServiceUnavailable || retry == "" || !strings.Contains(msg, "broker__maxQueuedBytes 300000") {
		t.Errorf("200 KB with 200 KB of 300 KB held: %d Retry-After %q %q; want 503 with Retry-After naming the bound", code, retry, msg)
	}
	s := mustScrape(t, b.URL)
	for reason, want := range map[string]float64{"too_large": 3, "broker_full": 1, "subscription_full": 0, "bodies_in_flight": 0} {
		if v, ok := s.value("eventgrid_publish_rejected_total", "reason", reason); !ok || v != want {
			t.Errorf("eventgrid_publish_rejected_total{reason=%s} = %v (%v); want %v", reason, v, ok, want)
		}
	}
}

// TestBudget_ShareWhateverTheMode: with broker__maxQueuedEventsPerSubscription
// 5, a batch of 6 gets 413 naming the bound and a request that does not fit
// a full share now 503 with Retry-After naming that subscription, whatever
// its delivery mode; nothing of a refused request is queued for the other
// subscriptions.
func TestBudget_ShareWhateverTheMode(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "metrics__reporterType", "prometheus", "broker__backoffIntervals", "1h,1h",
		"broker__maxQueuedEventsPerSubscription", "5"))
	budgetTopics(t, b, 1)
	for _, topic := range []string{"push", "queue", "both"} {
		code, retry, msg := publishBatch(t, b, topic, "six", 6)
		if code != http.StatusRequestEntityTooLarge || retry != "" || !strings.Contains(msg, "broker__maxQueuedEventsPerSubscription 5") {
			t.Errorf("%s, a batch of 6: %d Retry-After %q %q; want 413 naming broker__maxQueuedEventsPerSubscription", topic, code, retry, msg)
		}
		if code, _, msg := publishBatch(t, b, topic, "fill", 5); code != http.StatusOK {
			t.Fatalf("%s: filling the shares: %d %s", topic, code, msg)
		}
	}
	before, _ := mustScrape(t, b.URL).value("eventgrid_queued_events")
	for topic, names := range map[string][]string{"push": {"hook0"}, "queue": {"queue0"}, "both": {"bothhook", "bothqueue"}} {
		code, retry, msg := publishBatch(t, b, topic, "more", 1)
		named := false
		for _, n := range names {
			named = named || strings.Contains(msg, "Event subscription "+n+" holds its share")
		}
		if code != http.StatusServiceUnavailable || retry == "" || !named {
			t.Errorf("%s with its shares full: %d Retry-After %q %q; want 503 with Retry-After naming one of %v", topic, code, retry, msg, names)
		}
	}
	s := mustScrape(t, b.URL)
	if after, _ := s.value("eventgrid_queued_events"); after != before || before != 20 {
		t.Errorf("eventgrid_queued_events went from %v to %v over refused requests; want 20 throughout", before, after)
	}
	// One vocabulary for what each subscription holds, whatever its mode.
	for topic, names := range map[string][]string{"push": {"hook0"}, "queue": {"queue0"}, "both": {"bothhook", "bothqueue"}} {
		for _, n := range names {
			if v, _ := s.value("eventgrid_subscription_held_events", "topic", topic, "subscription", n); v != 5 {
				t.Errorf("eventgrid_subscription_held_events of %s = %v; want 5", n, v)
			}
			if v, _ := s.value("eventgrid_subscription_held_bytes", "topic", topic, "subscription", n); v != 5*200 {
				t.Errorf("eventgrid_subscription_held_bytes of %s = %v; want 1000", n, v)
			}
		}
	}
}

// TestBudget_HeldForAcknowledgements: a publish that does not fit a queue
// subscription's share is held while its consumer acknowledges events, and
// accepted once an acknowledgement makes room: a 200 instead of a 503 to
// retry. With broker__publishHoldInMilliseconds=0 it gets 503 at once.
func TestBudget_HeldForAcknowledgements(t *testing.T) {
	t.Parallel()
	for _, hold := range []string{"10000", "0"} {
		t.Run("hold"+hold, func(t *testing.T) {
			b := queueBroker(t, nil, []string{"q"}, "broker__maxQueuedEventsPerSubscription", "5",
				"broker__publishHoldInMilliseconds", hold)
			if code, _, msg := publishBatch(t, b, "t", "fill", 5); code != http.StatusOK {
				t.Fatalf("filling the share: %d %s", code, msg)
			}
			toks := receiveAll(t, b.URL, "q")
			if len(toks) != 5 {
				t.Fatalf("received %d events; want 5", len(toks))
			}
			ack := func(tok string) {
				mustDo(t, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/q:acknowledge?"+nsAPI, "application/json",
					`{"lockTokens":["`+tok+`"]}`, http.StatusOK)
			}
			ack(toks[0]) // the consumer is taking deliveries
			if code, _, msg := publishBatch(t, b, "t", "refill", 1); code != http.StatusOK {
				t.Fatalf("refilling the share: %d %s", code, msg)
			}
			type answer struct {
				code       int
				retry, msg string
			}
			done := make(chan answer, 1)
			go func() {
				code, retry, msg := publishBatch(t, b, "t", "late", 1)
				done <- answer{code, retry, msg}
			}()
			answered := func() answer {
				select {
				case a := <-done:
					return a
				case <-time.After(30 * time.Second):
					t.Fatal("the publish was not answered")
					return answer{}
				}
			}
			if hold == "0" {
				if a := answered(); a.code != http.StatusServiceUnavailable || a.retry == "" {
					t.Fatalf("with no hold: %d Retry-After %q %q; want 503 at once", a.code, a.retry, a.msg)
				}
				return
			}
			eventually(t, 5*time.Second, func() error {
				if v, _ := mustScrape(t, b.URL).value("eventgrid_publish_requests_waiting"); v != 1 {
					return fmt.Errorf("eventgrid_publish_requests_waiting = %v; want 1", v)
				}
				return nil
			})
			ack(toks[1])
			if a := answered(); a.code != http.StatusOK {
				t.Fatalf("held publish: %d %q; want 200 once an acknowledgement made room", a.code, a.msg)
			}
			if v, _ := mustScrape(t, b.URL).value("eventgrid_publish_requests_waiting"); v != 0 {
				t.Errorf("eventgrid_publish_requests_waiting = %v after the answer; want 0", v)
			}
		})
	}
}
