package tests_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/edgegrid/edgegrid/pkg/servicebus/servicebustest"
	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// queueIDs drains a storage queue and returns the ids of the events its
// messages decode to.
func queueIDs(t *testing.T, q *azqueue.QueueClient, ids map[string]int) {
	t.Helper()
	n := int32(32)
	resp, err := q.DequeueMessages(context.Background(), &azqueue.DequeueMessagesOptions{NumberOfMessages: &n})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range resp.Messages {
		raw, err := base64.StdEncoding.DecodeString(*m.MessageText)
		var ev map[string]any
		if err != nil || json.Unmarshal(raw, &ev) != nil {
			t.Fatalf("message %q is not a base64 JSON object", *m.MessageText)
		}
		ids[fmt.Sprint(ev["id"])]++
		if _, err := q.DeleteMessage(context.Background(), *m.MessageID, *m.PopReceipt, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// waitLastError waits until subscription name's deliveryStatus.lastError
// mentions want.
func waitLastError(t *testing.T, base, name, want string) {
	t.Helper()
	eventually(t, 10*time.Second, func() error {
		var st struct {
			Properties struct{ DeliveryStatus struct{ LastError string } }
		}
		_ = json.Unmarshal(mustDo(t, http.MethodGet, subURL(base, name), "", nil, 200), &st)
		if !strings.Contains(st.Properties.DeliveryStatus.LastError, want) {
			return fmt.Errorf("lastError %q, want it to mention %q", st.Properties.DeliveryStatus.LastError, want)
		}
		return nil
	})
}

func storageQueueDest(connStr, queue string, extra ...any) map[string]any {
	p := map[string]any{"connectionString": connStr, "queueName": queue}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i].(string)] = extra[i+1]
	}
	return map[string]any{"endpointType": "storageQueue", "properties": p}
}

func TestStorageQueue_EndToEnd(t *testing.T) {
	t.Parallel()
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	q, err := azqueue.NewQueueClientFromConnectionString(connStr, "events", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, fastEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "sq", map[string]any{"destination": storageQueueDest(connStr, "events", "queueMessageTimeToLiveInSeconds", 3600)})
	got := string(mustDo(t, http.MethodGet, subURL(b.URL, "sq"), "", nil, 200))
	if !strings.Contains(got, `"queueName":"events"`) || strings.Contains(got, azurite.Key) || strings.Contains(got, "connectionString") {
		t.Errorf("GET: %s", got)
	}
	publish(t, b.URL, "t", egEvents("q", 5))
	ids := map[string]int{}
	eventually(t, 10*time.Second, func() error {
		queueIDs(t, q, ids)
		if len(ids) != 5 {
			return fmt.Errorf("queue holds %v", ids)
		}
		return nil
	})

	t.Run("MissingQueue", func(t *testing.T) {
		createSubscription(t, b.URL, "t", "missing", map[string]any{"destination": storageQueueDest(connStr, "nosuchqueue")})
		publish(t, b.URL, "t", egEvents("m", 1))
		waitLastError(t, b.URL, "missing", "404 QueueNotFound")
	})
	t.Run("WrongKey", func(t *testing.T) {
		wrong := "AAAA" + azurite.Key[4:]
		createSubscription(t, b.URL, "t", "wrongkey", map[string]any{"destination": storageQueueDest(az.ConnectionString(wrong), "events")})
		publish(t, b.URL, "t", egEvents("w", 1))
		waitLastError(t, b.URL, "wrongkey", "403")
		if strings.Contains(b.Output(), wrong) || strings.Contains(b.Output(), azurite.Key) {
			t.Error("a key reached the broker's log")
		}
	})
	t.Run("BadProperties", func(t *testing.T) {
		for _, tc := range []struct {
			dest map[string]any
			want string
		}{
			{storageQueueDest(connStr, "Bad_Queue"), "queueName"},
			{storageQueueDest("AccountName=x", "events"), "connectionString has no AccountKey"},
			{storageQueueDest(connStr, "events", "queueMessageTimeToLiveInSeconds", 0), "queueMessageTimeToLiveInSeconds"},
		} {
			code, _, body := do(t, nil, http.MethodPut, subURL(b.URL, "bad"), "application/json", map[string]any{"properties": map[string]any{"destination": tc.dest}})
			if code != 400 || !strings.Contains(string(body), tc.want) || strings.Contains(string(body), azurite.Key) {
				t.Errorf("PUT %v: %d %s", tc.dest["properties"], code, body)
			}
		}
	})
}

// TestDestinations_Conservation: one subscription per destination type, each
// with faults (random webhook failures, Event Hubs refusals, the MQTT broker
// restarted mid-run); every event reaches every destination.
func TestDestinations_Conservation(t *testing.T) {
	t.Parallel()
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	q, err := azqueue.NewQueueClientFromConnectionString(connStr, "events", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ns := servicebustest.New(t, testpki.NewCA(t, "namespace ca"))
	hub := ns.AddEntity(servicebustest.EventHub, "hub")
	ca := testpki.NewCA(t, "mqtt ca")
	mq := mosquitto.Start(t, mosquitto.Options{CA: ca, Persistence: true, Users: map[string]string{"gw": "gw-pass", "checker": "checker-pw"}})
	mqSub := mosquitto.Subscribe(t, mq, ca, "checker", "checker-pw", mosquitto.ModuleMessages)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, fastEnv("broker__backoffIntervals", "100ms,300ms", "broker__logDeliveryFailure", "false",
		"edgehub__mqttUrl", mq.URL(), "edgehub__deviceId", "gw1", "edgehub__moduleId", "eventgridmodule",
		"edgehub__username", "gw", "edgehub__password", "gw-pass", "edgehub__caFile", caFile,
		"edgehub__maxReconnectIntervalInSeconds", "1"))
	rng := rand.New(rand.NewPCG(3, 5))
	var mu sync.Mutex
	hook := newSink(t, func(int, *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		if rng.IntN(100) < 30 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "webhook", map[string]any{"destination": webhookDest(hook.URL, "maxEventsPerBatch", 10)})
	createSubscription(t, b.URL, "t", "eventhub", map[string]any{"destination": map[string]any{"endpointType": "EventHub",
		"properties": map[string]any{"connectionString": hub, "maxEventsPerBatch": 10}}})
	createSubscription(t, b.URL, "t", "queue", map[string]any{"destination": storageQueueDest(connStr, "events")})
	createSubscription(t, b.URL, "t", "edgehub", map[string]any{"destination": map[string]any{"endpointType": "EdgeHub",
		"properties": map[string]any{"outputName": "out", "maxEventsPerBatch": 10}}})
	const n = 300
	for i := range n / 10 {
		if i%10 == 3 {
			ns.Fail(http.StatusServiceUnavailable, "")
			ns.Fail(http.StatusInternalServerError, "")
		}
		if i == n/20 {
			mq.Stop()
		}
		publish(t, b.URL, "t", egEvents(fmt.Sprint(i, "-"), 10))
	}
	mq.Restart()
	queued := map[string]int{}
	eventually(t, 60*time.Second, func() error {
		queueIDs(t, q, queued)
		hubIDs := map[string]bool{}
		for _, m := range ns.Messages("hub") {
			var ev map[string]any
			_ = json.Unmarshal(m.Body, &ev)
			hubIDs[fmt.Sprint(ev["id"])] = true
		}
		edge := map[string]bool{}
		for _, m := range mqSub.Messages() {
			var evs []map[string]any
			_ = json.Unmarshal([]byte(m.Payload), &evs)
			for _, ev := range evs {
				edge[fmt.Sprint(ev["id"])] = true
			}
		}
		if w, h, qn, e := len(hook.accepted(t)), len(hubIDs), len(queued), len(edge); w != n || h != n || qn != n || e != n {
			return fmt.Errorf("of %d events: webhook %d, event hub %d, storage queue %d, edgeHub %d", n, w, h, qn, e)
		}
		return nil
	})
}
