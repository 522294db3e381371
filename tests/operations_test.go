package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// desiredConfig is a module-twin-shaped declaration, with arrays written as
// JSON strings as IoT Edge twins require, the legacy deliveryPolicy, and one
// invalid entry (an http webhook while httpsOnly is on).
func desiredConfig(sinkURL string) string {
	doc := map[string]any{
		"topics": map[string]any{
			"sensors": map[string]any{"inputSchema": "EventGridSchema"},
			"raw":     map[string]any{"inputSchema": "customeventschema"},
		},
		"eventSubscriptions": map[string]any{
			"hot": map[string]any{
				"topic": "sensors",
				"destination": map[string]any{"endpointType": "WebHook",
					"properties": map[string]any{"endpointUrl": sinkURL + "/hot"}},
				"filter": map[string]any{
					"includedEventTypes": `["recordInserted"]`,
					"advancedFilters":    `[{"operatorType":"NumberGreaterThan","key":"data.n","value":0}]`,
				},
				"deliveryPolicy": map[string]any{"approxBatchSizeInBytes": 204800, "maxEventsPerBatch": 25},
			},
			"broken": map[string]any{
				"topic":       "sensors",
				"destination": map[string]any{"endpointType": "EdgeHub", "properties": map[string]any{"outputName": "x"}},
			},
			"orphan": map[string]any{
				"topic":       "missing",
				"destination": map[string]any{"endpointType": "WebHook", "properties": map[string]any{"endpointUrl": sinkURL}},
			},
		},
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

func TestBootstrap(t *testing.T) {
	t.Parallel()
	k := newSink(t, nil)
	doc := desiredConfig(k.URL)
	file := filepath.Join(t.TempDir(), "desired.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string][]string{
		"Environment": {"desired_config", doc},
		"File":        {"desired_config_file", file},
	} {
		t.Run(name, func(t *testing.T) {
			b := startBroker(t, merge(devEnv(), env...))
			waitReady(t, b)
			// The valid entries exist and behave like API-created ones.
			var sub struct {
				Properties struct {
					Filter struct {
						IncludedEventTypes []string `json:"includedEventTypes"`
					} `json:"filter"`
					Destination struct {
						Properties struct {
							MaxEventsPerBatch             int `json:"maxEventsPerBatch"`
							PreferredBatchSizeInKilobytes int `json:"preferredBatchSizeInKilobytes"`
						} `json:"properties"`
					} `json:"destination"`
				} `json:"properties"`
			}
			body := mustDo(t, http.MethodGet, b.URL+"/topics/sensors/eventSubscriptions/hot?"+apiVersion, "", nil, 200)
			if err := json.Unmarshal(body, &sub); err != nil {
				t.Fatal(err)
			}
			p := sub.Properties
			if fmt.Sprint(p.Filter.IncludedEventTypes) != "[recordInserted]" ||
				p.Destination.Properties.MaxEventsPerBatch != 25 || p.Destination.Properties.PreferredBatchSizeInKilobytes != 200 {
				t.Errorf("declared subscription read back as %s", body)
			}
			mustDo(t, http.MethodGet, b.URL+"/topics/raw?"+apiVersion, "", nil, 200)
			// The invalid ones were skipped, with their errors logged.
			mustDo(t, http.MethodGet, b.URL+"/topics/sensors/eventSubscriptions/broken?"+apiVersion, "", nil, 404)
			out := b.Output()
			for _, want := range []string{"broken", "InvalidDestination", "orphan", "TopicNotFound"} {
				if !strings.Contains(out, want) {
					t.Errorf("the log does not mention %q", want)
				}
			}
			before := len(k.accepted(t))
			publish(t, b.URL, "sensors", egEvents("boot"+name, 2)) // data.n = 0, 1: only the second passes
			k.waitAccepted(t, before+1, 10*time.Second)
		})
	}

	t.Run("BothSetIsAnError", func(t *testing.T) {
		cmdEnv := merge(devEnv(), "desired_config", doc, "desired_config_file", file)
		code, out := runToExit(t, cmdEnv)
		if code == 0 || !strings.Contains(out, "desired_config") {
			t.Errorf("exit %d with both desired_config and desired_config_file:\n%s", code, out)
		}
	})
}

func TestLogRateLimit(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__backoffIntervals", "1h,1h"))
	k := newSink(t, func(int, *http.Request) int { return http.StatusServiceUnavailable })
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "dead", map[string]any{"destination": webhookDest(k.URL)})
	const n = 2000
	for i := 0; i < n/100; i++ {
		publish(t, b.URL, "t", egEvents(fmt.Sprint(i, "-"), 100))
	}
	eventually(t, 30*time.Second, func() error {
		if got := len(k.requests()); got < n {
			return fmt.Errorf("%d of %d first attempts", got, n)
		}
		return nil
	})
	lines := b.Logs("delivery attempt failed")
	if len(lines) > 20 {
		t.Errorf("%d failure lines for one dead subscriber, want a bounded number", len(lines))
	}
	// Stopping discards the queue, which flushes the count of suppressed
	// lines: emitted plus suppressed must account for every failure.
	b.Stop()
	total := 0
	for _, l := range b.Logs("delivery attempt failed") {
		total++
		if s, ok := l["suppressed"].(float64); ok {
			total += int(s)
		}
	}
	for _, l := range b.Logs("log lines suppressed") {
		if l["kind"] != nil && strings.Contains(fmt.Sprint(l["kind"]), "fail") {
			total += int(l["suppressed"].(float64))
		}
	}
	if total != n {
		t.Errorf("failure lines plus suppressed counts = %d, want %d", total, n)
	}
}
