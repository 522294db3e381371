package tests_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
)

// validationHandler answers Event Grid validation events with the code it
// was sent, and accepts deliveries.
func validationHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var evs []struct {
			Data struct {
				ValidationCode string `json:"validationCode"`
			} `json:"data"`
		}
		if r.Header.Get("aeg-event-type") != "SubscriptionValidation" || json.Unmarshal(body, &evs) != nil || len(evs) != 1 {
			return
		}
		fmt.Fprintf(w, `{"validationResponse":%q}`, evs[0].Data.ValidationCode)
	})
}

// freeAddr returns a loopback address nothing listens on now, for an
// endpoint the test starts later: one from brokertest.FreeAddr, which no
// listener on port 0 takes meanwhile.
func freeAddr(t *testing.T) string {
	t.Helper()
	return brokertest.FreeAddr(t)
}

func validatedHook(topic, url string) map[string]any {
	return map[string]any{"topic": topic, "destination": webhookDest(url, "validation", "EventGrid")}
}

// readyz returns /readyz's status and body, decoded.
func readyz(t testing.TB, b *broker) (int, map[string]any) {
	t.Helper()
	code, _, body := do(t, nil, http.MethodGet, b.URL+"/readyz", "", nil)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	return code, m
}

// TestLiveConfig_HandshakeToAnEndpointUpLater: a declared subscription whose
// endpoint is not up yet fails its validation handshake (connection
// refused); /readyz says so, and the broker tries again with back-off, so
// the subscription is applied within seconds of the endpoint answering,
// without the declaration changing.
func TestLiveConfig_HandshakeToAnEndpointUpLater(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	file := filepath.Join(t.TempDir(), "desired.json")
	doc := mustJSON(t, map[string]any{"topics": map[string]any{"orders": map[string]any{}},
		"eventSubscriptions": map[string]any{"later": validatedHook("orders", "http://"+addr+"/hook")}})
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, fastEnv("desired_config_file", file, "desired_config_maxRetryIntervalInSeconds", "1"))
	waitReady(t, b)
	code, body := readyz(t, b)
	skipped := fmt.Sprint(body["desiredConfig"])
	if code != http.StatusOK || !strings.Contains(skipped, "later") || !strings.Contains(skipped, "could not be reached") || !strings.Contains(skipped, "nextRetry") {
		t.Errorf("readyz %d %v, want ready, listing the skipped subscription and its next retry", code, body)
	}
	mustDo(t, http.MethodGet, subURLOf(b.URL, "orders", "later"), "", nil, http.StatusNotFound)

	// The endpoint comes up.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("SKIPPED: the endpoint's port %s was taken meanwhile: %v", addr, err)
	}
	srv := &http.Server{Handler: validationHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	up := time.Now()
	eventually(t, 15*time.Second, func() error {
		if code, _, _ := do(t, nil, http.MethodGet, subURLOf(b.URL, "orders", "later"), "", nil); code != http.StatusOK {
			return fmt.Errorf("later: %d", code)
		}
		return nil
	})
	t.Logf("the subscription was applied %v after its endpoint came up (back-off at most 1 s)", time.Since(up).Round(time.Millisecond))
	eventually(t, 10*time.Second, func() error {
		if _, body := readyz(t, b); strings.Contains(fmt.Sprint(body["desiredConfig"]), "skipped") {
			return fmt.Errorf("readyz still lists skipped entries: %v", body)
		}
		return nil
	})
	if len(b.Logs("declared entries failed for a passing reason; applying the declaration again after a back-off")) == 0 {
		t.Error("the retry was not logged")
	}
}

// TestLiveConfig_HungHandshakesHoldNothing: declared subscriptions whose
// endpoints accept connections and never answer do not hold the listeners
// closed (/healthz answers at once) nor the other declared entries, and a
// SIGTERM while their handshakes wait stops the broker promptly.
func TestLiveConfig_HungHandshakesHoldNothing(t *testing.T) {
	t.Parallel()
	subs := map[string]any{}
	for i := range 3 {
		subs[fmt.Sprintf("hung%d", i)] = validatedHook("orders", newHungListener(t).URL+"/hook")
	}
	k := newSink(t, nil)
	subs["fine"] = map[string]any{"topic": "orders", "destination": webhookDest(k.URL + "/fine")}
	file := filepath.Join(t.TempDir(), "desired.json")
	if err := os.WriteFile(file, []byte(mustJSON(t, map[string]any{"topics": map[string]any{"orders": map[string]any{}}, "eventSubscriptions": subs})), 0o600); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	b := startBroker(t, fastEnv("desired_config_file", file))
	client := &http.Client{Timeout: 5 * time.Second}
	if code, _, body := do(t, client, http.MethodGet, b.URL+"/healthz", "", nil); code != http.StatusOK {
		t.Fatalf("healthz %d %s", code, body)
	}
	t.Logf("/healthz answered %v after the broker was started, with 3 declared handshakes hanging", time.Since(started).Round(time.Millisecond))
	eventually(t, 10*time.Second, func() error {
		if code, _, _ := do(t, client, http.MethodGet, subURLOf(b.URL, "orders", "fine"), "", nil); code != http.StatusOK {
			return fmt.Errorf("fine: %d", code)
		}
		return nil
	})
	publish(t, b.URL, "orders", egEvents("h", 2))
	k.waitAccepted(t, 2, 10*time.Second)
	// Not ready until the handshakes end (at their 30 s timeout): the
	// first declaration is not applied yet.
	if code, _ := readyz(t, b); code != http.StatusServiceUnavailable {
		t.Errorf("readyz %d while the first apply waits for its handshakes, want 503", code)
	}
	stopping := time.Now()
	b.Stop()
	if d := time.Since(stopping); d > 10*time.Second {
		t.Errorf("the broker took %v to stop with handshakes hanging", d)
	} else {
		t.Logf("stopped %v after SIGTERM with 3 handshakes hanging", d.Round(time.Millisecond))
	}
}

// TestLiveConfig_TwinRetriesReported: a subscription the module twin
// declares, whose endpoint is not up yet, is reported as an error in the
// twin's reported properties; once the endpoint answers, the broker's
// retry applies it and the report clears, with no new desired properties.
func TestLiveConfig_TwinRetriesReported(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	mq := mosquitto.Start(t, mosquitto.Options{Users: map[string]string{"module": "module-pass", "hub": "hub-pass"}})
	hub := startTwinHub(t, mq, "hub", "hub-pass", map[string]any{
		"topics":             map[string]any{"orders": map[string]any{}},
		"eventSubscriptions": map[string]any{"later": validatedHook("orders", "http://"+addr+"/hook")},
	})
	hub.startAnswering()
	startBroker(t, fastEnv(
		"edgehub__mqttUrl", mq.URL(), "edgehub__deviceId", "gw1", "edgehub__moduleId", "eventgridmodule",
		"edgehub__username", "module", "edgehub__password", "module-pass", "edgehub__twin", "enabled",
		"desired_config_maxRetryIntervalInSeconds", "1"))
	eventually(t, 15*time.Second, func() error {
		if msg, _ := hub.reportedAt("errors", "eventSubscriptions", "later").(string); !strings.Contains(msg, "could not be reached") {
			return fmt.Errorf("reported %v", hub.reportedAt())
		}
		return nil
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("SKIPPED: the endpoint's port %s was taken meanwhile: %v", addr, err)
	}
	srv := &http.Server{Handler: validationHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	eventually(t, 15*time.Second, func() error {
		if hub.reportedAt("eventSubscriptions", "later") == nil || hub.reportedAt("errors", "eventSubscriptions", "later") != nil {
			return fmt.Errorf("reported %v", hub.reportedAt())
		}
		return nil
	})
}
