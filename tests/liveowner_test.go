package tests_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
)

// ownedDecl declares topic "declared" with subscription "hot".
func ownedDecl(sinkURL string) map[string]any {
	return map[string]any{
		"topics":             map[string]any{"declared": map[string]any{}},
		"eventSubscriptions": map[string]any{"hot": map[string]any{"topic": "declared", "destination": webhookDest(sinkURL)}},
	}
}

// TestLiveConfig_DeclaredResourcesAnswer409: for each source of declared
// configuration, a PUT or DELETE of a declared topic or subscription over
// the REST API answers 409 Conflict naming the source and how to change it,
// and changes nothing; GET shows the owner; the API's own resources behave
// as before.
func TestLiveConfig_DeclaredResourcesAnswer409(t *testing.T) {
	t.Parallel()
	k := newSink(t, nil)
	decl := ownedDecl(k.URL + "/hot")
	file := filepath.Join(t.TempDir(), "desired.json")
	if err := os.WriteFile(file, []byte(mustJSON(t, decl)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		source, managedBy string
		start             func(t *testing.T) *broker
		says              []string
	}{
		{"desired_config", "desired_config", func(t *testing.T) *broker {
			return startBroker(t, fastEnv("desired_config", mustJSON(t, decl)))
		}, []string{"the desired_config setting", "restart the broker"}},
		{"desired_config_file", "desired_config_file:" + file, func(t *testing.T) *broker {
			return startBroker(t, fastEnv("desired_config_file", file))
		}, []string{"desired_config_file " + file, "edit that file"}},
		{"moduleTwin", "moduleTwin", func(t *testing.T) *broker {
			mq := mosquitto.Start(t, mosquitto.Options{Users: map[string]string{"module": "module-pass", "hub": "hub-pass"}})
			hub := startTwinHub(t, mq, "hub", "hub-pass", decl)
			hub.startAnswering()
			return startBroker(t, fastEnv(
				"edgehub__mqttUrl", mq.URL(), "edgehub__deviceId", "gw1", "edgehub__moduleId", "eventgridmodule",
				"edgehub__username", "module", "edgehub__password", "module-pass", "edgehub__twin", "enabled"))
		}, []string{"the module twin's desired properties", "IoT Hub"}},
	} {
		t.Run(tc.source, func(t *testing.T) {
			b := tc.start(t)
			waitReady(t, b)
			topicURL := b.URL + "/topics/declared?" + apiVersion
			subURL := subURLOf(b.URL, "declared", "hot")
			for _, req := range []struct {
				method, url, what string
				body              any
			}{
				{http.MethodPut, topicURL, `Topic "declared"`, map[string]any{"properties": map[string]any{}}},
				{http.MethodDelete, topicURL, `Topic "declared"`, nil},
				{http.MethodPut, subURL, `Event subscription "hot" of topic "declared"`, map[string]any{"properties": map[string]any{"destination": webhookDest(k.URL + "/elsewhere")}}},
				{http.MethodDelete, subURL, `Event subscription "hot" of topic "declared"`, nil},
			} {
				code, _, body := do(t, nil, req.method, req.url, "application/json", req.body)
				var env struct {
					Error struct {
						Code    string                         `json:"code"`
						Details struct{ Code, Message string } `json:"details"`
					} `json:"error"`
				}
				_ = json.Unmarshal(body, &env)
				if code != http.StatusConflict || env.Error.Code != "Conflict" || env.Error.Details.Code != "Conflict" {
					t.Errorf("%s %s = %d %s, want 409 Conflict", req.method, req.url, code, body)
					continue
				}
				for _, s := range append([]string{req.what}, tc.says...) {
					if !strings.Contains(env.Error.Details.Message, s) {
						t.Errorf("%s %s: message %q does not say %q", req.method, req.url, env.Error.Details.Message, s)
					}
				}
			}
			for _, url := range []string{topicURL, subURL} {
				var got struct {
					Properties struct {
						ManagedBy   string         `json:"managedBy"`
						Destination map[string]any `json:"destination"`
					} `json:"properties"`
				}
				_ = json.Unmarshal(mustDo(t, http.MethodGet, url, "", nil, http.StatusOK), &got)
				if got.Properties.ManagedBy != tc.managedBy {
					t.Errorf("GET %s: managedBy %q, want %q", url, got.Properties.ManagedBy, tc.managedBy)
				}
				if url == subURL && !strings.Contains(fmt.Sprint(got.Properties.Destination), "/hot") {
					t.Errorf("the refused PUT changed the subscription: %v", got.Properties.Destination)
				}
			}
			// The API's own subscription on the declared topic, as before.
			createSubscription(t, b.URL, "declared", "mine", map[string]any{"destination": webhookDest(k.URL + "/mine")})
			if strings.Contains(string(mustDo(t, http.MethodGet, subURLOf(b.URL, "declared", "mine"), "", nil, http.StatusOK)), "managedBy") {
				t.Error("an API-created subscription shows managedBy")
			}
			mustDo(t, http.MethodDelete, subURLOf(b.URL, "declared", "mine"), "", nil, http.StatusOK)
		})
	}
}

// TestLiveConfig_TypoMoveKeepsTheQueue: moving a declared queue
// subscription to a topic that does not exist (a typo) leaves the last good
// version in force with its 100 queued events, reports the mistake in
// /readyz, and every event can still be received. With broker__replicas
// above 1, the queue subscription is warned about at start.
func TestLiveConfig_TypoMoveKeepsTheQueue(t *testing.T) {
	t.Parallel()
	declare := func(topic string) map[string]string {
		return map[string]string{"desired.json": mustJSON(t, map[string]any{
			"topics":             map[string]any{"orders": map[string]any{}},
			"eventSubscriptions": map[string]any{"app1": merge2(queueProps(map[string]any{}), "topic", topic)},
		})}
	}
	cm := newConfigMap(t, declare("orders"))
	b := startBroker(t, fastEnv("desired_config_file", filepath.Join(cm.dir, "desired.json"),
		"desired_config_pollIntervalInSeconds", "1", "broker__replicas", "2"))
	waitReady(t, b)
	// The warning follows the configuration's first application, which
	// /readyz may report before the line is logged and read.
	const warning = "this broker is one of several replicas and holds queue subscriptions: each replica keeps its own queue, so an event published through the Service to one pod can be received only from that pod, and a lock taken on one pod is unknown to the others; run one replica, or one broker per queue consumer group (docs/kubernetes.md)"
	eventually(t, 10*time.Second, func() error {
		if l := b.Logs(warning); len(l) == 0 {
			return errors.New("no replicas warning logged")
		}
		return nil
	})
	if l := b.Logs(warning); len(l) != 1 || l[0]["queueSubscriptions"] != "orders/app1" {
		t.Errorf("replicas warning lines %v, want one naming orders/app1", l)
	}
	for i := range 4 {
		publish(t, b.URL, "orders", egEvents(fmt.Sprint("e", i, "-"), 25))
	}
	available := func() string {
		var s map[string]any
		_ = json.Unmarshal(mustDo(t, http.MethodGet, subURLOf(b.URL, "orders", "app1"), "", nil, http.StatusOK), &s)
		return fmt.Sprint(s["properties"].(map[string]any)["deliveryStatus"])
	}
	if got := available(); !strings.Contains(got, "available:100") {
		t.Fatalf("deliveryStatus %s, want 100 available", got)
	}

	cm.swap(t, declare("ordrs"))
	eventually(t, 15*time.Second, func() error {
		if _, body := readyz(t, b); !strings.Contains(fmt.Sprint(body["desiredConfig"]), `Topic "ordrs" does not exist`) {
			return fmt.Errorf("readyz %v", body)
		}
		return nil
	})
	if got := available(); !strings.Contains(got, "available:100") {
		t.Errorf("after the typo, deliveryStatus %s, want the 100 events still there", got)
	}
	received := map[string]bool{}
	for len(received) < 100 {
		code, _, body := do(t, nil, http.MethodPost, b.URL+"/topics/orders/eventsubscriptions/app1:receive?api-version=2024-06-01&maxEvents=100&maxWaitTime=10", "", nil)
		var got struct {
			Value []struct {
				Event struct{ ID string } `json:"event"`
			} `json:"value"`
		}
		if code != http.StatusOK || json.Unmarshal(body, &got) != nil || len(got.Value) == 0 {
			t.Fatalf("receive = %d %s after %d events", code, body, len(received))
		}
		for _, v := range got.Value {
			received[v.Event.ID] = true
		}
	}
	for _, l := range b.Logs("declarative configuration applied")[1:] {
		if fmt.Sprint(l["deletedEventSubscriptions"], l["eventSubscriptions"], l["deletedTopics"]) != "[] [] []" {
			t.Errorf("apply line %v, want nothing changed by the typo", l)
		}
	}
}

// TestLiveConfig_DeclarationMistakesPositioned: a declaration with a JSON
// mistake is refused with the line and column of the mistake (at start, it
// stops the broker; later, the last good one stays), and an entry's error
// speaks the declaration's terms, with no "properties." level.
func TestLiveConfig_DeclarationMistakesPositioned(t *testing.T) {
	t.Parallel()
	const broken = "{\n  \"topics\": {\n    \"orders\": {},,\n  }\n}"
	t.Run("at start", func(t *testing.T) {
		for _, env := range [][]string{{"desired_config", broken}, {"desired_config_file", writeTemp(t, broken)}} {
			code, out := runToExit(t, merge(devEnv(), env...))
			if code == 0 || !strings.Contains(out, env[0]) || !strings.Contains(out, "line 3, column 18: invalid character ','") {
				t.Errorf("%s: exit %d, output lacks the position:\n%s", env[0], code, out)
			}
		}
	})
	t.Run("followed live", func(t *testing.T) {
		cm := newConfigMap(t, map[string]string{"desired.json": mustJSON(t, map[string]any{
			"topics": map[string]any{"orders": map[string]any{}},
			"eventSubscriptions": map[string]any{
				"plain": map[string]any{"topic": "orders", "destination": webhookDest("http://sink.example/x")},
				"empty": map[string]any{"topic": "orders"},
			},
		})})
		b := startBroker(t, merge(devEnv(), "desired_config_file", filepath.Join(cm.dir, "desired.json"), "desired_config_pollIntervalInSeconds", "1",
			"outbound__webhook__httpsOnly", "true"))
		waitReady(t, b)
		_, body := readyz(t, b)
		skipped := fmt.Sprint(body["desiredConfig"])
		for _, want := range []string{"Message='destination.properties.endpointUrl must use https", "Message='destination is required.'"} {
			if !strings.Contains(skipped, want) {
				t.Errorf("readyz %s lacks %q", skipped, want)
			}
		}
		if strings.Contains(skipped, "properties.destination") {
			t.Errorf("readyz %s names API paths", skipped)
		}
		cm.swap(t, map[string]string{"desired.json": broken})
		eventually(t, 15*time.Second, func() error {
			for _, l := range b.Logs("declaration not applied: the configuration last applied stays in force") {
				if strings.Contains(fmt.Sprint(l["error"]), "line 3, column 18: invalid character ','") {
					return nil
				}
			}
			return fmt.Errorf("no positioned error logged")
		})
		mustDo(t, http.MethodGet, b.URL+"/topics/orders?"+apiVersion, "", nil, http.StatusOK)
	})
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "desired.json")
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
