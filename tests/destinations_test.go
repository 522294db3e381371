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

	"github.com/edgegrid/edgegrid/pkg/servicebus/servicebustest"
	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// subURL is the URL of subscription name of topic t.
func subURL(base, name string) string {
	return base + "/topics/t/eventSubscriptions/" + name + "?" + apiVersion
}

// TestDestinations_ServiceBus delivers to Event Hubs and Service Bus
// entities. No emulator of either runs here: servicebustest.Namespace
// implements their REST send APIs with the services' checks, over TLS.
func TestDestinations_ServiceBus(t *testing.T) {
	t.Parallel()
	ns := servicebustest.New(t, testpki.NewCA(t, "namespace ca"))
	hub := ns.AddEntity(servicebustest.EventHub, "hub")
	queue := ns.AddEntity(servicebustest.Queue, "queue")
	b := startBroker(t, fastEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "eh", map[string]any{
		"destination": map[string]any{"endpointType": "eventHub", "properties": map[string]any{"connectionString": hub}}})
	createSubscription(t, b.URL, "t", "sbq", map[string]any{
		"destination": map[string]any{"endpointType": "serviceBusQueue", "properties": map[string]any{
			"connectionString": queue, "maxEventsPerBatch": 10,
			"deliveryAttributeMappings": []any{map[string]any{"name": "subject", "type": "Dynamic", "properties": map[string]any{"sourceField": "subject"}}},
		}}})

	got := mustDo(t, http.MethodGet, subURL(b.URL, "sbq"), "", nil, http.StatusOK)
	key := queue[strings.Index(queue, "SharedAccessKey=")+len("SharedAccessKey=") : strings.Index(queue, ";EntityPath")]
	if strings.Contains(string(got), key) || strings.Contains(string(got), "connectionString") {
		t.Fatalf("GET returns the connection string: %s", got)
	}

	evs := egEvents("e", 3)
	publish(t, b.URL, "t", evs)
	eventually(t, 10*time.Second, func() error {
		if n, m := len(ns.Messages("hub")), len(ns.Messages("queue")); n != 3 || m != 3 {
			return fmt.Errorf("%d event hub and %d queue messages, want 3 each (refused: %q)", n, m, ns.Refused())
		}
		return nil
	})
	// Without batching, events go out concurrently, in any order.
	seen := map[any]bool{}
	for _, m := range ns.Messages("hub") {
		var ev map[string]any
		if err := json.Unmarshal(m.Body, &ev); err != nil || m.Batched {
			t.Errorf("event hub message %s (batched %v)", m.Body, m.Batched)
		}
		seen[ev["id"]] = true
	}
	if !seen["e0"] || !seen["e1"] || !seen["e2"] {
		t.Errorf("event hub got ids %v", seen)
	}
	for _, m := range ns.Messages("queue") {
		var ev map[string]any
		if err := json.Unmarshal(m.Body, &ev); err != nil || !m.Batched {
			t.Fatalf("queue message %s", m.Body)
		}
		// Custom delivery properties arrive as user properties.
		if v, ok := m.UserProperties["subject"]; !ok || v != ev["subject"] {
			t.Errorf("property subject = %v, want %v", v, ev["subject"])
		}
	}

	t.Run("retried after a failure", func(t *testing.T) {
		ns.Fail(http.StatusServiceUnavailable, "")
		publish(t, b.URL, "t", egEvents("r", 1))
		eventually(t, 10*time.Second, func() error {
			if n := len(ns.Messages("hub")); n != 4 {
				return fmt.Errorf("%d event hub messages, want 4", n)
			}
			return nil
		})
	})

	t.Run("bad connection strings", func(t *testing.T) {
		for _, cs := range []string{strings.TrimSuffix(hub, ";EntityPath=hub"), "Endpoint=ftp://x/;SharedAccessKeyName=n;SharedAccessKey=" + key + ";EntityPath=e", ""} {
			code, _, body := do(t, nil, http.MethodPut, subURL(b.URL, "bad"), "application/json", map[string]any{"properties": map[string]any{
				"destination": map[string]any{"endpointType": "ServiceBusTopic", "properties": map[string]any{"connectionString": cs}}}})
			if code != http.StatusBadRequest || !strings.Contains(string(body), "connectionString") || strings.Contains(string(body), key) {
				t.Errorf("PUT with %q: %d %s", cs, code, body)
			}
		}
	})
	if strings.Contains(b.Output(), key) {
		t.Fatal("the broker logged a connection string's key")
	}
}

// TestDestinations_EdgeHubUnavailable: outside IoT Edge and without an MQTT
// endpoint, an EdgeHub subscription is refused with the keys that enable it.
func TestDestinations_EdgeHubUnavailable(t *testing.T) {
	t.Parallel()
	b := startBroker(t, devEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	code, _, body := do(t, nil, http.MethodPut, subURL(b.URL, "s"), "application/json", map[string]any{"properties": map[string]any{
		"destination": map[string]any{"endpointType": "edgeHub", "properties": map[string]any{"outputName": "o"}}}})
	if code != http.StatusBadRequest || !strings.Contains(string(body), "InvalidDestination") ||
		!strings.Contains(string(body), "IOTEDGE_WORKLOADURI") || !strings.Contains(string(body), "edgehub__mqttUrl") {
		t.Fatalf("PUT = %d %s", code, body)
	}
}

// TestDestinations_EdgeHub publishes through a real mosquitto standing in
// for edgeHub, configured with the edgehub__* keys, and survives the MQTT
// broker's restart.
func TestDestinations_EdgeHub(t *testing.T) {
	t.Parallel()
	b, mq, sub := startEdgeHubBroker(t, true)
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{
		"destination": map[string]any{"endpointType": "EdgeHub", "properties": map[string]any{"outputName": "sampleSub4", "maxEventsPerBatch": 5}}})
	got := mustDo(t, http.MethodGet, subURL(b.URL, "s"), "", nil, http.StatusOK)
	if !strings.Contains(string(got), `"outputName":"sampleSub4"`) {
		t.Fatalf("GET: %s", got)
	}

	publish(t, b.URL, "t", egEvents("a", 2))
	const topic = "devices/gw1/modules/eventgridmodule/messages/events/%24.on=sampleSub4&%24.ct=application%2Fjson&%24.ce=utf-8/"
	eventually(t, 10*time.Second, func() error {
		ids := receivedIDs(t, sub, topic)
		if !ids["a0"] || !ids["a1"] {
			return fmt.Errorf("received %v", ids)
		}
		return nil
	})

	mq.Stop()
	publish(t, b.URL, "t", egEvents("b", 2))
	mq.Restart()
	eventually(t, 20*time.Second, func() error {
		ids := receivedIDs(t, sub, topic)
		if !ids["b0"] || !ids["b1"] {
			return fmt.Errorf("after the restart: received %v", ids)
		}
		return nil
	})
	if strings.Contains(b.Output(), "gateway-pass") {
		t.Fatal("the broker logged the MQTT password")
	}
}

// receivedIDs returns the ids of the events in the messages on topic; each
// message body is a JSON array of events.
func receivedIDs(t *testing.T, sub *mosquitto.Subscriber, topic string) map[string]bool {
	ids := map[string]bool{}
	for _, m := range sub.Messages() {
		if m.Topic != topic || m.QoS != 1 {
			t.Fatalf("message on %s at QoS %d; want %s at 1", m.Topic, m.QoS, topic)
		}
		var evs []map[string]any
		if err := json.Unmarshal([]byte(m.Payload), &evs); err != nil {
			t.Fatalf("body %s is not a JSON array: %v", m.Payload, err)
		}
		for _, ev := range evs {
			ids[fmt.Sprint(ev["id"])] = true
		}
	}
	return ids
}

// startEdgeHubBroker starts mosquitto standing in for edgeHub (over TLS,
// with a gateway user and a checker that subscribes to module messages)
// and a broker configured with the edgehub__* keys to publish to it.
func startEdgeHubBroker(t *testing.T, persistence bool) (*broker, *mosquitto.Broker, *mosquitto.Subscriber) {
	t.Helper()
	ca := testpki.NewCA(t, "mqtt ca")
	mq := mosquitto.Start(t, mosquitto.Options{CA: ca, Persistence: persistence, Users: map[string]string{"gateway-user": "gateway-pass", "checker": "checker-pw"}})
	sub := mosquitto.Subscribe(t, mq, ca, "checker", "checker-pw", mosquitto.ModuleMessages)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, fastEnv(
		"edgehub__mqttUrl", mq.URL(), "edgehub__deviceId", "gw1", "edgehub__moduleId", "eventgridmodule",
		"edgehub__username", "gateway-user", "edgehub__password", "gateway-pass", "edgehub__caFile", caFile,
		"edgehub__maxReconnectIntervalInSeconds", "1"))
	return b, mq, sub
}
