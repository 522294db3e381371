package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// cloudEnv runs the CloudExponential schedule a hundred times faster: the
// first retries come after 100 ms, 300 ms, 600 ms, 3 s.
func cloudEnv(kv ...string) map[string]string {
	return merge(devEnv(), append([]string{
		"broker__exponentialScale", "0.01",
		"metrics__reporterType", "prometheus",
	}, kv...)...)
}

func cloudSub(url string) map[string]any {
	return map[string]any{
		"destination": webhookDest(url),
		"retryPolicy": map[string]any{"schedule": "CloudExponential", "maxDeliveryAttempts": 30},
	}
}

func TestCloud_Schedule(t *testing.T) {
	// Serial (see doc.go): retry gaps within 20 % (and 0.5 s) of the schedule.
	b := startBroker(t, cloudEnv())
	k := newSink(t, func(n int, _ *http.Request) int {
		if n <= 4 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", cloudSub(k.URL))
	publish(t, b.URL, "t", egEvents("e", 1))
	k.waitAccepted(t, 1, 20*time.Second)
	reqs := k.requests()
	// 10 s, 30 s, 1 min, 5 min scaled by 0.01, each within ±20 %.
	want := []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond, 3 * time.Second}
	if len(reqs) != 5 {
		t.Fatalf("%d attempts, want 5", len(reqs))
	}
	for i, w := range want {
		gap := reqs[i+1].at.Sub(reqs[i].at)
		lo, hi := time.Duration(float64(w)*0.8), time.Duration(float64(w)*1.2)+500*time.Millisecond
		if gap < lo || gap > hi {
			t.Errorf("gap before attempt %d = %v, want %v ± 20%%", i+2, gap, w)
		}
	}
}

func TestCloud_StatusClasses(t *testing.T) {
	t.Parallel()
	b := startBroker(t, cloudEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	// The reason names the answer's outcome, as a dead letter's
	// deadLetterReason does.
	reasons := map[int]string{400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 410: "NotFound", 413: "PayloadTooLarge"}
	for _, code := range []int{400, 401, 403, 404, 410, 413} {
		t.Run(fmt.Sprint("NeverRetried", code), func(t *testing.T) {
			k := newSink(t, func(int, *http.Request) int { return code })
			name := fmt.Sprint("s", code)
			createSubscription(t, b.URL, "t", name, cloudSub(k.URL))
			publish(t, b.URL, "t", egEvents(name, 1))
			reason := "UndeliverableDueToHttp" + reasons[code]
			eventually(t, 10*time.Second, func() error {
				if v, _ := mustScrape(t, b.URL).value("eventgrid_events_dropped_total", "subscription", name, "reason", reason); v != 1 {
					return fmt.Errorf("dropped as %s: %v", reason, v)
				}
				return nil
			})
			if n := len(k.requests()); n != 1 {
				t.Errorf("%d attempts after %d, want 1", n, code)
			}
			mustDo(t, http.MethodDelete, b.URL+"/topics/t/eventSubscriptions/"+name+"?"+apiVersion, "", nil, 200)
		})
	}
	t.Run("RetryAfter", func(t *testing.T) {
		var mu sync.Mutex
		var at []time.Time
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			at = append(at, time.Now())
			n := len(at)
			mu.Unlock()
			if n == 1 {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}))
		defer srv.Close()
		createSubscription(t, b.URL, "t", "ra", cloudSub(srv.URL))
		publish(t, b.URL, "t", egEvents("ra", 1))
		eventually(t, 10*time.Second, func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(at) < 2 {
				return fmt.Errorf("%d attempts", len(at))
			}
			if gap := at[1].Sub(at[0]); gap < 2*time.Second {
				t.Errorf("retried %v after 429 with Retry-After: 2", gap)
			}
			return nil
		})
	})
	t.Run("ServerErrorsRetry", func(t *testing.T) {
		k := newSink(t, func(n int, _ *http.Request) int {
			return []int{503, 408, 500, 200}[min(n-1, 3)]
		})
		createSubscription(t, b.URL, "t", "retry", cloudSub(k.URL))
		publish(t, b.URL, "t", egEvents("retry", 1))
		k.waitAccepted(t, 1, 20*time.Second)
		reqs := k.requests()
		// 503: at least 30 s (scaled: 300 ms); 408: at least 2 min (1.2 s).
		if gap := reqs[1].at.Sub(reqs[0].at); gap < 300*time.Millisecond {
			t.Errorf("retried %v after 503, want at least 300ms", gap)
		}
		if gap := reqs[2].at.Sub(reqs[1].at); gap < 1200*time.Millisecond {
			t.Errorf("retried %v after 408, want at least 1.2s", gap)
		}
	})
}

func TestCloud_Probation(t *testing.T) {
	// Serial (see doc.go): the probe must come at least 2 s after a publish that a slow poll of the status delays.
	b := startBroker(t, cloudEnv("broker__probationAfterFailures", "3"))
	k := newSink(t, func(n int, _ *http.Request) int {
		if n <= 3 {
			return http.StatusNotFound // never retried; probation of 5 min (3 s scaled)
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", cloudSub(k.URL))
	for i := range 3 {
		publish(t, b.URL, "t", egEvents(fmt.Sprint("f", i), 1))
		eventually(t, 5*time.Second, func() error {
			if n := len(k.requests()); n != i+1 {
				return fmt.Errorf("%d requests", n)
			}
			return nil
		})
	}
	var status struct {
		Properties struct {
			DeliveryStatus struct {
				ProbationUntil string `json:"probationUntil"`
			} `json:"deliveryStatus"`
		} `json:"properties"`
	}
	eventually(t, 5*time.Second, func() error {
		_ = json.Unmarshal(mustDo(t, http.MethodGet, b.URL+"/topics/t/eventSubscriptions/s?"+apiVersion, "", nil, 200), &status)
		if status.Properties.DeliveryStatus.ProbationUntil == "" {
			return fmt.Errorf("not on probation after 3 failures")
		}
		return nil
	})
	if v, _ := mustScrape(t, b.URL).value("eventgrid_subscription_on_probation", "subscription", "s"); v != 1 {
		t.Errorf("eventgrid_subscription_on_probation = %v, want 1", v)
	}
	published := time.Now()
	publish(t, b.URL, "t", egEvents("late", 1))
	k.waitAccepted(t, 1, 10*time.Second)
	reqs := k.requests()
	if gap := reqs[3].at.Sub(published); gap < 2*time.Second {
		t.Errorf("a new event was sent %v after publishing, during probation", gap)
	}
	if !strings.Contains(string(reqs[3].body), "late") {
		t.Errorf("the probe carried %s", reqs[3].body)
	}
	eventually(t, 5*time.Second, func() error {
		if v, _ := mustScrape(t, b.URL).value("eventgrid_subscription_on_probation", "subscription", "s"); v != 0 {
			return fmt.Errorf("still on probation after a success")
		}
		return nil
	})
}

func TestCloud_BadSchedule(t *testing.T) {
	t.Parallel()
	b := startBroker(t, devEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	body := mustDo(t, http.MethodPut, b.URL+"/topics/t/eventSubscriptions/s?"+apiVersion, "application/json", map[string]any{
		"properties": map[string]any{"destination": webhookDest("http://127.0.0.1:1/"), "retryPolicy": map[string]any{"schedule": "Sometimes"}},
	}, 400)
	if !strings.Contains(string(body), "retryPolicy.schedule") || !strings.Contains(string(body), "CloudExponential") {
		t.Errorf("400 body %s", body)
	}
	sub := mustDo(t, http.MethodPut, b.URL+"/topics/t/eventSubscriptions/s?"+apiVersion, "application/json", map[string]any{
		"properties": map[string]any{"destination": webhookDest("http://127.0.0.1:1/"), "retryPolicy": map[string]any{"schedule": "cloudexponential"}},
	}, 200)
	if !strings.Contains(string(sub), `"schedule":"CloudExponential"`) {
		t.Errorf("PUT answered %s", sub)
	}
}
