package tests_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape is one parse of GET /metrics.
type scrape map[string]*dto.MetricFamily

func mustScrape(t testing.TB, base string, header ...string) scrape {
	t.Helper()
	code, _, body := do(t, nil, http.MethodGet, base+"/metrics?"+apiVersion, "", nil, header...)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d: %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value returns the value of the series of family name whose labels include
// the given name=value pairs: a counter's or gauge's value, a histogram's
// sample count. ok is false if there is no such series.
func (s scrape) value(name string, labels ...string) (float64, bool) {
	f, ok := s[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func (s scrape) mustValue(t testing.TB, want float64, name string, labels ...string) {
	t.Helper()
	got, ok := s.value(name, labels...)
	if !ok {
		t.Errorf("no series %s{%s}", name, strings.Join(labels, ","))
		return
	}
	if got != want {
		t.Errorf("%s{%s} = %v, want %v", name, strings.Join(labels, ","), got, want)
	}
}

func TestMetrics_Prometheus(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv(
		"metrics__reporterType", "prometheus",
		"broker__backoffIntervals", "100ms,100ms",
		"broker__defaultMaxDeliveryAttempts", "2"))
	ok := newSink(t, nil)
	failing := newSink(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "good", map[string]any{
		"destination": webhookDest(ok.URL),
		"filter":      map[string]any{"includedEventTypes": []string{"match"}},
	})
	createSubscription(t, b.URL, "t", "bad", map[string]any{
		"destination": webhookDest(failing.URL),
		"filter":      map[string]any{"subjectBeginsWith": "/bad"},
	})

	// Scripted: 3 events for "good", 2 for "bad", 4 for nobody; one
	// malformed request (user error).
	var evs []map[string]any
	for i := range 9 {
		ev := egEvents(fmt.Sprint("e", i, "-"), 1)[0]
		switch {
		case i < 3:
			ev["eventType"] = "match"
		case i < 5:
			ev["eventType"], ev["subject"] = "other", "/bad/x"
		default:
			ev["eventType"] = "other"
		}
		evs = append(evs, ev)
	}
	publish(t, b.URL, "t", evs)
	mustDo(t, http.MethodPost, b.URL+"/topics/t/events?"+apiVersion, "application/json", `[{"id":`, 400)
	ok.waitAccepted(t, 3, 10e9)
	eventually(t, 10e9, func() error {
		s := mustScrape(t, b.URL)
		if v, _ := s.value("eventgrid_subscription_expired_total", "subscription", "bad"); v != 2 {
			return fmt.Errorf("expired for bad = %v", v)
		}
		return nil
	})

	s := mustScrape(t, b.URL)
	topic := []string{"topic", "t"}
	s.mustValue(t, 9, "eventgrid_topic_events_received_total", topic...)
	s.mustValue(t, 4, "eventgrid_topic_unmatched_events_total", topic...)
	s.mustValue(t, 1, "eventgrid_topic_success_requests_total", topic...)
	s.mustValue(t, 1, "eventgrid_topic_user_error_requests_total", topic...)
	s.mustValue(t, 0, "eventgrid_topic_system_error_requests_total", topic...)
	s.mustValue(t, 1, "eventgrid_topic_success_request_latency_ms", topic...)

	good := []string{"topic", "t", "subscription", "good"}
	s.mustValue(t, 3, "eventgrid_subscription_delivery_success_total", good...)
	s.mustValue(t, 0, "eventgrid_subscription_delivery_failure_total", good...)
	s.mustValue(t, 3, "eventgrid_subscription_delivery_attempts_total", good...)
	s.mustValue(t, 3, "eventgrid_subscription_delivery_success_latency_ms", good...)
	s.mustValue(t, 3, "eventgrid_subscription_system_delay_for_first_attempt_ms", good...)
	s.mustValue(t, 0, "eventgrid_subscription_expired_total", good...)

	bad := []string{"topic", "t", "subscription", "bad"}
	s.mustValue(t, 0, "eventgrid_subscription_delivery_success_total", bad...)
	s.mustValue(t, 4, "eventgrid_subscription_delivery_failure_total", bad...) // 2 events × 2 attempts
	s.mustValue(t, 4, "eventgrid_subscription_delivery_attempts_total", bad...)
	s.mustValue(t, 4, "eventgrid_subscription_delivery_failure_latency_ms", bad...)
	s.mustValue(t, 2, "eventgrid_subscription_expired_total", bad...)
	s.mustValue(t, 2, "eventgrid_events_dropped_total", append(bad, "reason", "MaxDeliveryAttemptsExceeded")...)
	s.mustValue(t, 0, "eventgrid_push_events", append(bad, "state", "ready")...)
	s.mustValue(t, 0, "eventgrid_queued_events")
	s.mustValue(t, 0, "eventgrid_deliveries_in_flight")

	t.Run("AuthenticatedLikeTheAPI", func(t *testing.T) {
		sec := startBroker(t, merge(devEnv(), "metrics__reporterType", "prometheus",
			"inbound__clientAuth__sasKeys__enabled", "true", "inbound__clientAuth__sasKeys__key1", "k1"))
		if code, _, _ := do(t, nil, http.MethodGet, sec.URL+"/metrics", "", nil); code != 401 {
			t.Errorf("/metrics without credentials = %d, want 401", code)
		}
		mustScrape(t, sec.URL, "aeg-sas-key", "k1")
	})

	t.Run("OffSaysWhichKeyTurnsThemOn", func(t *testing.T) {
		// A reader who follows a page to /metrics learns which key serves
		// them, not that the path is unknown; authentication still comes
		// first, as on every route.
		for _, reporter := range []string{"", "none", "console"} {
			env := merge(devEnv(), "inbound__clientAuth__sasKeys__enabled", "true", "inbound__clientAuth__sasKeys__key1", "k1")
			if reporter != "" {
				env["metrics__reporterType"] = reporter
			}
			off := startBroker(t, env)
			if code, _, _ := do(t, nil, http.MethodGet, off.URL+"/metrics", "", nil); code != 401 {
				t.Errorf("reporterType %q: /metrics without credentials = %d, want 401", reporter, code)
			}
			code, _, body := do(t, nil, http.MethodGet, off.URL+"/metrics?"+apiVersion, "", nil, "aeg-sas-key", "k1")
			want := `{"error":{"code":"NotFound","details":{"code":"NotFound","message":"Metrics are not served: the broker serves them at /metrics with metrics__reporterType=prometheus."}}}`
			if code != 404 || strings.TrimSpace(string(body)) != want {
				t.Errorf("reporterType %q: /metrics = %d %s, want 404 %s", reporter, code, body, want)
			}
			off.Stop()
		}
	})

	t.Run("DeletedSeriesGo", func(t *testing.T) {
		mustDo(t, http.MethodDelete, b.URL+"/topics/t?"+apiVersion, "", nil, 200)
		s := mustScrape(t, b.URL)
		if _, ok := s.value("eventgrid_topic_events_received_total", "topic", "t"); ok {
			t.Error("series of a deleted topic still served")
		}
		if _, ok := s.value("eventgrid_subscription_delivery_success_total", "subscription", "good"); ok {
			t.Error("series of a deleted subscription still served")
		}
	})
}

func TestMetrics_Console(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("metrics__reporterType", "console", "metrics__reportingIntervalInSeconds", "1"))
	k := newSink(t, nil)
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(k.URL)})
	publish(t, b.URL, "t", egEvents("e", 5))
	k.waitAccepted(t, 5, 10e9)
	eventually(t, 10e9, func() error {
		for _, l := range b.Logs("subscription metrics") {
			if l["subscription"] == "s" {
				return nil
			}
		}
		return fmt.Errorf("no console summary for the subscription yet")
	})
}
