package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestInspection_Streams: the live tail and the delivery outcomes deliver
// what happens from the moment they open, keep going with heartbeats,
// drop the oldest items for a reader that falls behind (and say so)
// without slowing publishing, end with "deleted" when what they follow is
// deleted and when the broker stops, and are refused beyond
// api__maxEventStreams. (How long a stream lasts is
// TestInspection_StreamLifetime's.) The streams come from three clients,
// as one client may hold only half of the streams.
func TestInspection_Streams(t *testing.T) {
	t.Parallel()
	s := newInspectScene(t, "api__maxEventStreams", "3")
	createTopic(t, s.b.URL, "bulk", "EventGridSchema")
	tail := openStreamFrom(t, s.url("/topics/orders/events"), true, "127.0.0.2")
	healthy := openStreamFrom(t, s.url("/topics/orders/eventSubscriptions/healthy/deliveries"), true, "127.0.0.3")
	failing := openStreamFrom(t, s.url("/topics/orders/eventSubscriptions/failing/deliveries"), true, "127.0.0.4")

	code, h, body := do(t, nil, http.MethodGet, s.url("/topics/empty/events?"+apiVersion), "", nil)
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") != "10" || !strings.Contains(string(body), "TooManyStreams") ||
		!strings.Contains(string(body), "At most 3 event streams may be open at once (api__maxEventStreams).") {
		t.Errorf("a fourth stream: %d, Retry-After %q, %s", code, h.Get("Retry-After"), body)
	}

	publish(t, s.b.URL, "orders", egEvents("t", 3))
	var ids []string
	for _, d := range tail.waitNamed("published", 3, 10*time.Second) {
		var ev map[string]any
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatalf("published %q: %v", d, err)
		}
		ids = append(ids, fmt.Sprint(ev["id"]))
	}
	if strings.Join(ids, ",") != "t0,t1,t2" {
		t.Errorf("the tail shows %v", ids)
	}
	for _, d := range healthy.waitNamed("delivery", 3, 10*time.Second) {
		wantFields(t, "delivered", decode(t, d), map[string]any{"outcome": "delivered", "attempt": 1, "time": "set", "latencyMs": "set",
			"error": nil, "nextAttemptTime": nil})
	}
	for _, d := range failing.waitNamed("delivery", 3, 10*time.Second) {
		wantFields(t, "failed", decode(t, d), map[string]any{"outcome": "failed", "attempt": 1, "statusCode": 503, "error": "set",
			"nextAttemptTime": "set", "latencyMs": "set"})
	}

	// Eight heartbeats a second apart, and the streams still deliver.
	eventually(t, 20*time.Second, func() error {
		if _, beats, _ := tail.snapshot(); beats < 8 {
			return fmt.Errorf("%d keep-alive comments", beats)
		}
		return nil
	})
	publish(t, s.b.URL, "orders", egEvents("late", 1))
	tail.waitNamed("published", 4, 10*time.Second)

	// Deleting a subscription ends its stream, and frees its place.
	mustDo(t, http.MethodDelete, s.url("/topics/orders/eventSubscriptions/failing?"+apiVersion), "", nil, http.StatusOK)
	if d := failing.waitNamed("deleted", 1, 10*time.Second); d[0] != `{"subscription":"failing","topic":"orders"}` {
		t.Errorf("deleted: %s", d[0])
	}
	failing.waitEnded(10 * time.Second)

	t.Run("SlowReader", func(t *testing.T) {
		var slow *sseStream
		eventually(t, 10*time.Second, func() error { // the deleted stream's place is freed as its handler returns
			var code int
			if slow, code = dialStreamFrom(t, s.url("/topics/bulk/events"), false, "127.0.0.4"); slow == nil {
				return fmt.Errorf("GET = %d", code)
			}
			return nil
		})
		// 16 events of almost 1 MB, more than the stream (4 MiB) and the
		// connection's buffers hold: publishing does not wait for the
		// reader, and the oldest are dropped.
		pad := strings.Repeat("x", 1000000)
		start := time.Now()
		for i := range 16 {
			publish(t, s.b.URL, "bulk", []map[string]any{{"id": fmt.Sprint("big", i), "subject": "s", "eventType": "t",
				"eventTime": "2026-01-01T00:00:00Z", "dataVersion": "1.0", "data": map[string]any{"pad": pad}}})
		}
		t.Logf("16 publishes of 1 MB with a reader that reads nothing: %v", time.Since(start))
		slow.resume()
		slow.waitNamed("dropped", 1, 20*time.Second)
		eventually(t, 20*time.Second, func() error {
			got, dropped := slow.named("published"), 0
			for _, d := range slow.named("dropped") {
				var c struct{ Count int }
				if err := json.Unmarshal([]byte(d), &c); err != nil || c.Count < 1 {
					t.Fatalf("dropped: %s", d)
				}
				dropped += c.Count
			}
			if n := len(got); n == 0 || !strings.Contains(got[n-1], `"id":"big15"`) {
				return fmt.Errorf("%d events read, the newest not among them", n)
			}
			if n := len(got); n+dropped != 16 {
				return fmt.Errorf("%d read and %d dropped of 16", n, dropped)
			}
			t.Logf("the reader got %d events, and was told %d were dropped", len(got), dropped)
			return nil
		})
	})

	// Deleting the topic ends its tail and its subscriptions' streams.
	mustDo(t, http.MethodDelete, s.url("/topics/orders?"+apiVersion), "", nil, http.StatusOK)
	if d := tail.waitNamed("deleted", 1, 10*time.Second); d[0] != `{"topic":"orders"}` {
		t.Errorf("deleted: %s", d[0])
	}
	healthy.waitNamed("deleted", 1, 10*time.Second)
	tail.waitEnded(10 * time.Second)
	healthy.waitEnded(10 * time.Second)

	// An event whose JSON holds line breaks (a custom event, kept as it
	// came) goes as several data lines, which a reader joins with \n.
	createTopic(t, s.b.URL, "custom", "CustomEventSchema")
	last := openStreamFrom(t, s.url("/topics/custom/events"), true, "127.0.0.5")
	publish(t, s.b.URL, "custom", "[{\n  \"a\": 1,\r\n  \"b\": \"x\"\r}]")
	if d := last.waitNamed("published", 1, 10*time.Second); d[0] != "{\n  \"a\": 1,\n  \"b\": \"x\"\n}" {
		t.Errorf("an event with line breaks reads %q", d[0])
	}

	// The stop ends the streams still open, at once.
	stopped := time.Now()
	s.b.Stop()
	last.waitEnded(10 * time.Second)
	t.Logf("the broker stopped in %v with a stream open", time.Since(stopped))
}

func decode(t *testing.T, data string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	return m
}
