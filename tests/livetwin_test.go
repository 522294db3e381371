package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
)

// twinHub plays IoT Hub's part of the module twin protocol on the MQTT
// topics a device or module uses (Microsoft's "Communicate with an IoT hub
// using MQTT": $iothub/twin/GET/?$rid=N answered on
// $iothub/twin/res/200/?$rid=N with {"desired", "reported"}; reported
// patches on $iothub/twin/PATCH/properties/reported/?$rid=N answered with
// 204; desired patches published on
// $iothub/twin/PATCH/properties/desired/?$version=N). With mosquitto
// relaying, it is a faithful stand-in for edgeHub's documented twin
// protocol: the module sees the same topics, payloads and sequence.
type twinHub struct {
	t  *testing.T
	cl mqtt.Client

	mu       sync.Mutex
	answer   bool // whether GETs are answered yet
	pending  []string
	desired  map[string]any
	version  int
	reported map[string]any
	patches  []map[string]any // reported patches received
}

func startTwinHub(t *testing.T, mq *mosquitto.Broker, user, pass string, desired map[string]any) *twinHub {
	t.Helper()
	h := &twinHub{t: t, desired: desired, version: 1, reported: map[string]any{}}
	subscribed := make(chan error, 1)
	// A persistent session (mosquitto keeps it across its restart) and a
	// subscription on every connection keep the stand-in serving across a
	// restart of mosquitto, as IoT Hub is there all along: a request the
	// module sends before the stand-in is back waits for it.
	opts := mqtt.NewClientOptions().AddBroker("tcp://" + mq.Addr()).SetClientID("hub-standin").
		SetUsername(user).SetPassword(pass).SetProtocolVersion(4).SetCleanSession(false).SetOrderMatters(true).
		SetAutoReconnect(true).SetMaxReconnectInterval(200 * time.Millisecond).
		SetOnConnectHandler(func(cl mqtt.Client) {
			tok := cl.SubscribeMultiple(map[string]byte{"$iothub/twin/GET/#": 1, "$iothub/twin/PATCH/properties/reported/#": 1}, h.onMessage)
			tok.WaitTimeout(10 * time.Second)
			select {
			case subscribed <- tok.Error():
			default:
			}
		})
	h.cl = mqtt.NewClient(opts)
	if tok := h.cl.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("hub stand-in: connect: %v", tok.Error())
	}
	t.Cleanup(func() { h.cl.Disconnect(100) })
	select {
	case err := <-subscribed:
		if err != nil {
			t.Fatalf("hub stand-in: subscribe: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("hub stand-in: not subscribed")
	}
	return h
}

func rid(topic string) string {
	_, q, _ := strings.Cut(topic, "?")
	for _, kv := range strings.Split(q, "&") {
		if k, v, _ := strings.Cut(kv, "="); k == "$rid" {
			return v
		}
	}
	return ""
}

func (h *twinHub) onMessage(_ mqtt.Client, m mqtt.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := rid(m.Topic())
	switch {
	case strings.HasPrefix(m.Topic(), "$iothub/twin/GET/"):
		if !h.answer {
			h.pending = append(h.pending, r)
			return
		}
		h.answerGet(r)
	case strings.HasPrefix(m.Topic(), "$iothub/twin/PATCH/properties/reported/"):
		var p map[string]any
		if err := json.Unmarshal(m.Payload(), &p); err != nil {
			h.publish("$iothub/twin/res/400/?$rid="+r, nil)
			return
		}
		h.patches = append(h.patches, p)
		mergePatch(h.reported, p)
		h.publish(fmt.Sprintf("$iothub/twin/res/204/?$rid=%s&$version=%d", r, len(h.patches)+1), nil)
	}
}

// answerGet answers a GET; h.mu is held.
func (h *twinHub) answerGet(r string) {
	d := map[string]any{}
	mergePatch(d, h.desired)
	d["$version"] = h.version
	rep := map[string]any{}
	mergePatch(rep, h.reported)
	rep["$version"] = len(h.patches) + 1
	b, _ := json.Marshal(map[string]any{"desired": d, "reported": rep})
	h.publish("$iothub/twin/res/200/?$rid="+r, b)
}

func (h *twinHub) publish(topic string, body []byte) {
	// From the MQTT client's callback: do not wait for the token.
	h.cl.Publish(topic, 1, false, body)
}

// startAnswering answers the GETs held so far, and all from now on.
func (h *twinHub) startAnswering() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answer = true
	for _, r := range h.pending {
		h.answerGet(r)
	}
	h.pending = nil
}

// patchDesired publishes a desired-properties patch, as IoT Hub does after
// `az iot hub module-twin update --desired ...`; body is sent as it is.
func (h *twinHub) patchDesired(body string) {
	h.t.Helper()
	h.mu.Lock()
	h.version++
	v := h.version
	var p map[string]any
	if json.Unmarshal([]byte(body), &p) == nil {
		mergePatch(h.desired, p)
	}
	h.mu.Unlock()
	tok := h.cl.Publish(fmt.Sprintf("$iothub/twin/PATCH/properties/desired/?$version=%d", v), 1, false, body)
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		h.t.Fatalf("hub stand-in: publish: %v", tok.Error())
	}
}

// patchDesiredUnseen changes the desired properties without publishing
// the patch, as when the module was away: the next patch's version then
// skips one.
func (h *twinHub) patchDesiredUnseen(p map[string]any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.version++
	mergePatch(h.desired, p)
}

// reportedAt returns a copy of the reported property at path (nil if
// absent).
func (h *twinHub) reportedAt(path ...string) any {
	h.mu.Lock()
	b, _ := json.Marshal(h.reported)
	h.mu.Unlock()
	var v any
	_ = json.Unmarshal(b, &v)
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// mergePatch merges p into d as twin patches merge: null removes.
func mergePatch(d, p map[string]any) {
	for k, v := range p {
		switch pv := v.(type) {
		case nil:
			delete(d, k)
		case map[string]any:
			dv, ok := d[k].(map[string]any)
			if !ok {
				dv = map[string]any{}
				d[k] = dv
			}
			mergePatch(dv, pv)
		default:
			d[k] = v
		}
	}
}

// TestLiveConfig_ModuleTwin: the broker reads its module twin over the
// edgeHub MQTT connection (mosquitto relaying, the test playing IoT Hub),
// is not ready until the twin is read, applies desired-properties patches
// live (one adds a subscription and removes another), reports what it
// applied and the errors of a bad entry and of a malformed patch, and keeps
// running through them.
func TestLiveConfig_ModuleTwin(t *testing.T) {
	t.Parallel()
	mq := mosquitto.Start(t, mosquitto.Options{Persistence: true, Users: map[string]string{"module": "module-pass", "hub": "hub-pass"}})
	s1, s2, s3 := newSink(t, nil), newSink(t, nil), newSink(t, nil)
	hookOf := func(k *sink) map[string]any {
		return map[string]any{"topic": "orders", "destination": webhookDest(k.URL + "/hook"),
			"filter": map[string]any{"includedEventTypes": `["recordInserted"]`}} // arrays are JSON strings in twins
	}
	hub := startTwinHub(t, mq, "hub", "hub-pass", map[string]any{
		"topics":             map[string]any{"orders": map[string]any{"inputSchema": "EventGridSchema"}},
		"eventSubscriptions": map[string]any{"s1": hookOf(s1), "s2": hookOf(s2)},
	})
	b := startBroker(t, fastEnv(
		"edgehub__mqttUrl", mq.URL(), "edgehub__deviceId", "gw1", "edgehub__moduleId", "eventgridmodule",
		"edgehub__username", "module", "edgehub__password", "module-pass", "edgehub__twin", "enabled",
		"edgehub__maxReconnectIntervalInSeconds", "1"))

	// The twin is not read yet: not ready, though alive.
	eventually(t, 10*time.Second, func() error {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		if len(hub.pending) == 0 {
			return fmt.Errorf("no twin read yet")
		}
		return nil
	})
	mustDo(t, http.MethodGet, b.URL+"/readyz", "", nil, http.StatusServiceUnavailable)
	mustDo(t, http.MethodGet, b.URL+"/healthz", "", nil, http.StatusOK)
	hub.startAnswering()
	eventually(t, 10*time.Second, func() error {
		if code, _, _ := do(t, nil, http.MethodGet, b.URL+"/readyz", "", nil); code != http.StatusOK {
			return fmt.Errorf("readyz %d", code)
		}
		if hub.reportedAt("eventSubscriptions", "s2") == nil {
			return fmt.Errorf("reported %v", hub.reportedAt())
		}
		return nil
	})
	if got := hub.reportedAt("eventSubscriptions", "s1"); fmt.Sprint(got) != "map[endpointType:WebHook topic:orders]" {
		t.Errorf("reported s1 = %v", got)
	}
	publish(t, b.URL, "orders", egEvents("a", 2))
	s1.waitAccepted(t, 2, 10*time.Second)
	s2.waitAccepted(t, 2, 10*time.Second)

	// A patch adds s3 and removes s2.
	patched := time.Now()
	hub.patchDesired(mustJSON(t, map[string]any{"$version": 2, "eventSubscriptions": map[string]any{"s2": nil, "s3": hookOf(s3)}}))
	eventually(t, 10*time.Second, func() error {
		if hub.reportedAt("eventSubscriptions", "s3") == nil || hub.reportedAt("eventSubscriptions", "s2") != nil {
			return fmt.Errorf("reported %v", hub.reportedAt("eventSubscriptions"))
		}
		return nil
	})
	t.Logf("the patch was applied and reported %v after it was published", time.Since(patched).Round(time.Millisecond))
	mustDo(t, http.MethodGet, subURLOf(b.URL, "orders", "s3"), "", nil, http.StatusOK)
	mustDo(t, http.MethodGet, subURLOf(b.URL, "orders", "s2"), "", nil, http.StatusNotFound)

	// A malformed patch is reported, not fatal.
	hub.patchDesired(`{"eventSubscriptions": {`)
	eventually(t, 10*time.Second, func() error {
		if msg, _ := hub.reportedAt("errors", "desiredPatch").(string); !strings.Contains(msg, "version 3 is not a JSON object") {
			return fmt.Errorf("reported errors %v", hub.reportedAt("errors"))
		}
		return nil
	})
	// A bad entry is reported and skipped; the rest of the patch applies,
	// and the malformed patch's error is cleared.
	hub.patchDesired(mustJSON(t, map[string]any{"$version": 4, "eventSubscriptions": map[string]any{
		"bad": map[string]any{"topic": "orders", "destination": map[string]any{"endpointType": "Carrier", "properties": map[string]any{}}},
		"s1":  nil,
	}}))
	eventually(t, 10*time.Second, func() error {
		msg, _ := hub.reportedAt("errors", "eventSubscriptions", "bad").(string)
		if !strings.HasPrefix(msg, "HttpStatusCode='BadRequest' ErrorCode='InvalidDestination'") {
			return fmt.Errorf("reported errors %v", hub.reportedAt("errors"))
		}
		if hub.reportedAt("errors", "desiredPatch") != nil || hub.reportedAt("eventSubscriptions", "s1") != nil {
			return fmt.Errorf("reported %v", hub.reportedAt())
		}
		return nil
	})
	// A patch missed (version 5) shows in the next one's version (6): the
	// broker reads the whole twin again and applies both.
	s4, s5 := newSink(t, nil), newSink(t, nil)
	hub.patchDesiredUnseen(map[string]any{"eventSubscriptions": map[string]any{"s4": hookOf(s4)}})
	hub.patchDesired(mustJSON(t, map[string]any{"$version": 6, "eventSubscriptions": map[string]any{"s5": hookOf(s5)}}))
	eventually(t, 10*time.Second, func() error {
		if hub.reportedAt("eventSubscriptions", "s4") == nil || hub.reportedAt("eventSubscriptions", "s5") == nil {
			return fmt.Errorf("reported %v", hub.reportedAt("eventSubscriptions"))
		}
		return nil
	})

	if len(b.Logs("desired-properties patch out of sequence; reading the whole twin again")) != 1 {
		t.Errorf("no resynchronisation logged")
	}

	// While the module is away from edgeHub, s6 is declared; it reads the
	// whole twin again when it is back, and applies s6.
	s6 := newSink(t, nil)
	mq.Stop()
	hub.patchDesiredUnseen(map[string]any{"eventSubscriptions": map[string]any{"s6": hookOf(s6)}})
	mq.Restart()
	eventually(t, 20*time.Second, func() error {
		if hub.reportedAt("eventSubscriptions", "s6") == nil {
			return fmt.Errorf("reported %v", hub.reportedAt("eventSubscriptions"))
		}
		return nil
	})

	publish(t, b.URL, "orders", egEvents("n", 3))
	s6.waitAccepted(t, 3, 10*time.Second)
	s3.waitAccepted(t, 3, 10*time.Second)
	s4.waitAccepted(t, 3, 10*time.Second)
	s5.waitAccepted(t, 3, 10*time.Second)
	if n := len(s1.accepted(t)); n != 2 {
		t.Errorf("s1 accepted %d events, want the 2 before its removal", n)
	}
	if n := len(s2.accepted(t)); n != 2 {
		t.Errorf("s2 accepted %d events, want the 2 before its removal", n)
	}
	if strings.Contains(b.Output(), "module-pass") {
		t.Error("the broker logged the MQTT password")
	}
}
