package tests_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Secrets the subscriptions below carry: none may leave the broker but
// towards its own destination.
const (
	urlKey     = "dXJsLWtleS1vZi1hLWZ1bmN0aW9u"
	headerKey  = "aGVhZGVyLXNlY3JldA"
	accountKey = "YWNjb3VudC1rZXk="
	entityKey  = "ZW50aXR5LWtleQ=="
	topicKey   = "dG9waWMta2V5"
	signing    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
)

var secrets = []string{urlKey, headerKey, accountKey, entityKey, topicKey, signing}

// mustHideSecrets fails t if text shows any of the secrets.
func mustHideSecrets(t *testing.T, what string, text []byte) {
	t.Helper()
	for _, s := range secrets {
		if bytes.Contains(text, []byte(s)) {
			t.Errorf("%s shows the secret %q:\n%s", what, s, text)
		}
	}
}

// withoutStatus returns a subscription's JSON without its deliveryStatus,
// which counts what happens, not what was configured.
func withoutStatus(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if p, ok := m["properties"].(map[string]any); ok {
		delete(p, "deliveryStatus")
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestSecrets_RoundTripEveryKind: for a topic and a subscription of every
// destination kind, GET shows what the subscription targets and none of its
// secrets, and a PUT of exactly what GET returned is accepted and changes
// nothing.
func TestSecrets_RoundTripEveryKind(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(),
		"edgehub__mqttUrl", "mqtt://127.0.0.1:1", "edgehub__deviceId", "gw1", "edgehub__moduleId", "eventgridmodule"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	createTopic(t, b.URL, "q", "CloudEventSchemaV1_0")
	storage := "DefaultEndpointsProtocol=http;AccountName=edgestore;AccountKey=" + accountKey +
		";BlobEndpoint=http://blobstorage:11002/edgestore;QueueEndpoint=http://queuestorage:11001/edgestore"
	entity := "Endpoint=sb://ns1.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=" + entityKey + ";EntityPath=orders"
	secretHeader := []any{map[string]any{"name": "Authorization", "type": "Static", "properties": map[string]any{"value": "Bearer " + headerKey, "isSecret": true}}}
	deadLetter := map[string]any{"endpointType": "StorageBlob", "properties": map[string]any{"blobContainerName": "dead", "connectionString": storage}}
	dest := func(kind string, props map[string]any) map[string]any {
		return map[string]any{"endpointType": kind, "properties": props}
	}
	cases := []struct {
		topic, name string
		props       map[string]any
		shown       []string
	}{
		{"t", "hook", map[string]any{
			"destination": webhookDest("http://127.0.0.1:9/api/fn?code="+urlKey+"&clientId=default",
				"signingSecret", signing, "deliveryAttributeMappings", secretHeader, "maxEventsPerBatch", 5),
			"deadLetterDestination": deadLetter,
			"retryPolicy":           map[string]any{"maxDeliveryAttempts": 3},
			"filter":                map[string]any{"subjectBeginsWith": "/a/"},
		}, []string{`"endpointBaseUrl":"http://127.0.0.1:9/api/fn"`, `"accountName":"edgestore"`, `"blobEndpoint":"http://blobstorage:11002/edgestore"`}},
		{"t", "eventgrid", map[string]any{"destination": dest("EventGrid", map[string]any{
			"endpointUrl": "https://t1.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01", "sasKey": topicKey, "topicName": "domainTopic"})},
			[]string{`"endpointBaseUrl":"https://t1.westus-1.eventgrid.azure.net/api/events"`, `"topicName":"domainTopic"`}},
		{"t", "edgehub", map[string]any{"destination": dest("EdgeHub", map[string]any{"outputName": "o1", "deliveryAttributeMappings": secretHeader})},
			[]string{`"outputName":"o1"`}},
		{"t", "eventhub", map[string]any{"destination": dest("EventHub", map[string]any{"connectionString": entity})},
			[]string{`"namespace":"ns1.servicebus.windows.net"`, `"entityPath":"orders"`}},
		{"t", "sbqueue", map[string]any{"destination": dest("ServiceBusQueue", map[string]any{"connectionString": entity})},
			[]string{`"namespace":"ns1.servicebus.windows.net"`, `"entityPath":"orders"`}},
		{"t", "sbtopic", map[string]any{"destination": dest("ServiceBusTopic", map[string]any{"connectionString": entity})},
			[]string{`"namespace":"ns1.servicebus.windows.net"`, `"entityPath":"orders"`}},
		{"t", "storagequeue", map[string]any{"destination": dest("StorageQueue", map[string]any{"connectionString": storage, "queueName": "events"})},
			[]string{`"accountName":"edgestore"`, `"queueEndpoint":"http://queuestorage:11001/edgestore"`, `"queueName":"events"`}},
		{"q", "pull", map[string]any{"deliveryConfiguration": map[string]any{"deliveryMode": "Queue",
			"queue": map[string]any{"maxDeliveryCount": 5, "deadLetterDestination": deadLetter}}},
			[]string{`"accountName":"edgestore"`, `"blobContainerName":"dead"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			createSubscription(t, b.URL, c.topic, c.name, c.props)
			url := b.URL + "/topics/" + c.topic + "/eventSubscriptions/" + c.name + "?" + apiVersion
			got := mustDo(t, http.MethodGet, url, "", nil, http.StatusOK)
			mustHideSecrets(t, "GET", got)
			for _, s := range c.shown {
				if !strings.Contains(string(got), s) {
					t.Errorf("GET does not show %s:\n%s", s, got)
				}
			}
			mustDo(t, http.MethodPut, url, "application/json", got, http.StatusOK)
			again := mustDo(t, http.MethodGet, url, "", nil, http.StatusOK)
			if a, b := withoutStatus(t, got), withoutStatus(t, again); a != b {
				t.Errorf("a PUT of GET changed the subscription\nbefore %s\n after %s", a, b)
			}
		})
	}
	list := mustDo(t, http.MethodGet, b.URL+"/topics/t/eventSubscriptions?"+apiVersion, "", nil, http.StatusOK)
	mustHideSecrets(t, "the list", list)

	topic := mustDo(t, http.MethodGet, b.URL+"/topics/q?"+apiVersion, "", nil, http.StatusOK)
	mustDo(t, http.MethodPut, b.URL+"/topics/q?"+apiVersion, "application/json", topic, http.StatusOK)
	if again := mustDo(t, http.MethodGet, b.URL+"/topics/q?"+apiVersion, "", nil, http.StatusOK); !bytes.Equal(again, topic) {
		t.Errorf("a PUT of GET changed the topic\nbefore %s\n after %s", topic, again)
	}
	mustHideSecrets(t, "the log", []byte(b.Output()))
}

// keySink is a webhook that records each request's query and answers
// with the statuses of answers in turn (200 once they run out).
type keySink struct {
	*httptest.Server
	mu      sync.Mutex
	queries []string
	headers []http.Header
	answers []int
}

func newKeySink(t *testing.T, answers ...int) *keySink {
	k := &keySink{answers: answers}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		k.mu.Lock()
		k.queries = append(k.queries, r.URL.RawQuery)
		k.headers = append(k.headers, r.Header.Clone())
		status := http.StatusOK
		if len(k.answers) > 0 {
			status, k.answers = k.answers[0], k.answers[1:]
		}
		k.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(k.Close)
	return k
}

// received returns the queries and headers of the requests so far.
func (k *keySink) received() ([]string, []http.Header) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.queries...), append([]http.Header(nil), k.headers...)
}

// waitRequests waits until the sink has had n requests.
func (k *keySink) waitRequests(t *testing.T, n int) {
	t.Helper()
	eventually(t, 15*time.Second, func() error {
		if q, _ := k.received(); len(q) < n {
			return fmt.Errorf("%d of %d requests", len(q), n)
		}
		return nil
	})
}

// TestSecrets_WebhookURLKey: the key in a webhook URL's query appears in
// no GET, list, deliveryStatus, metric or log line; getFullUrl returns it;
// after a PUT of what GET returned, deliveries still carry it.
func TestSecrets_WebhookURLKey(t *testing.T) {
	t.Parallel()
	k := newKeySink(t, http.StatusInternalServerError)
	b := startBroker(t, fastEnv("broker__logDeliverySuccess", "true", "metrics__reporterType", "prometheus"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	full := k.URL + "/api/fn?code=" + urlKey + "&clientId=default"
	createSubscription(t, b.URL, "t", "fn", map[string]any{"destination": webhookDest(full)})
	url := b.URL + "/topics/t/eventSubscriptions/fn?" + apiVersion

	publish(t, b.URL, "t", egEvents("key", 1))
	k.waitRequests(t, 2) // a failure (lastError set), then the retry
	var sub struct {
		Properties struct {
			DeliveryStatus struct{ LastError string } `json:"deliveryStatus"`
		} `json:"properties"`
	}
	got := mustDo(t, http.MethodGet, url, "", nil, http.StatusOK)
	if err := json.Unmarshal(got, &sub); err != nil || !strings.HasPrefix(sub.Properties.DeliveryStatus.LastError, "webhook: destination answered 500") {
		t.Errorf("deliveryStatus.lastError = %q (%v)", sub.Properties.DeliveryStatus.LastError, err)
	}
	mustHideSecrets(t, "GET", got)
	mustHideSecrets(t, "the list", mustDo(t, http.MethodGet, b.URL+"/topics/t/eventSubscriptions?"+apiVersion, "", nil, http.StatusOK))
	mustHideSecrets(t, "the metrics", mustDo(t, http.MethodGet, b.URL+"/metrics", "", nil, http.StatusOK))

	fullURL := mustDo(t, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/fn/getFullUrl?"+apiVersion, "", nil, http.StatusOK)
	if want, _ := json.Marshal(map[string]string{"endpointUrl": full}); string(fullURL) != string(want)+"\n" && string(fullURL) != string(want) {
		t.Errorf("getFullUrl = %s, want %s", fullURL, want)
	}

	mustDo(t, http.MethodPut, url, "application/json", got, http.StatusOK)
	publish(t, b.URL, "t", egEvents("after", 1))
	k.waitRequests(t, 3)
	queries, _ := k.received()
	for i, q := range queries {
		if q != "code="+urlKey+"&clientId=default" {
			t.Errorf("request %d came with the query %q", i, q)
		}
	}
	mustHideSecrets(t, "the log", []byte(b.Output()))
}

// TestSecrets_EventGridDestination: an EventGrid destination's failures
// name it, and after a PUT of what GET returned its deliveries still carry
// the SAS key GET does not show.
func TestSecrets_EventGridDestination(t *testing.T) {
	t.Parallel()
	k := newKeySink(t, http.StatusServiceUnavailable)
	b := startBroker(t, fastEnv("outbound__eventgrid__httpsOnly", "false", "outbound__eventgrid__allowInvalidHostnames", "true"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "cloud", map[string]any{"destination": map[string]any{"endpointType": "EventGrid",
		"properties": map[string]any{"endpointUrl": k.URL + "/api/events?api-version=2018-01-01", "sasKey": topicKey}}})
	url := b.URL + "/topics/t/eventSubscriptions/cloud?" + apiVersion

	publish(t, b.URL, "t", egEvents("eg", 1))
	k.waitRequests(t, 2)
	got := mustDo(t, http.MethodGet, url, "", nil, http.StatusOK)
	if !strings.Contains(string(got), `"lastError":"eventgrid: destination answered 503 Service Unavailable"`) {
		t.Errorf("the failure is not the EventGrid destination's:\n%s", got)
	}
	mustHideSecrets(t, "GET", got)
	mustDo(t, http.MethodPut, url, "application/json", got, http.StatusOK)
	publish(t, b.URL, "t", egEvents("eg-after", 1))
	k.waitRequests(t, 3)
	_, headers := k.received()
	for i, h := range headers {
		if h.Get("aeg-sas-key") != topicKey {
			t.Errorf("request %d came without the key: %q", i, h.Get("aeg-sas-key"))
		}
	}
	mustHideSecrets(t, "the log", []byte(b.Output()))
}
