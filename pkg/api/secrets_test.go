package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// The key in a webhook URL's query is not returned by GET or list; a PUT
// of what GET returned keeps it; getFullUrl returns it.
func TestSecrets_WebhookURL(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", "")
	const full = "http://127.0.0.1:9/api/fn?code=s3cr3t-key&clientId=default"
	ts.MustPutSubscription(t, "t", "s", map[string]any{"properties": map[string]any{
		"destination": map[string]any{"endpointType": "WebHook", "properties": map[string]any{"endpointUrl": full}},
	}})
	get := ts.do(t, http.MethodGet, "/topics/t/eventSubscriptions/s", "", nil)
	mustStatus(t, get, http.StatusOK)
	list := ts.do(t, http.MethodGet, "/topics/t/eventSubscriptions", "", nil)
	for _, r := range []response{get, list} {
		if strings.Contains(string(r.Body), "s3cr3t") || strings.Contains(string(r.Body), "endpointUrl") {
			t.Errorf("the URL's query is shown: %s", r.Body)
		}
	}
	if got := at(mustObject(t, get.Body), "properties.destination.properties.endpointBaseUrl"); got != "http://127.0.0.1:9/api/fn" {
		t.Errorf("endpointBaseUrl = %v", got)
	}

	r := ts.do(t, http.MethodPut, "/topics/t/eventSubscriptions/s", ctJSON, get.Body)
	mustStatus(t, r, http.StatusOK)
	if sub, err := ts.Registry.Subscription(t.Context(), "t", "s"); err != nil || sub.Destination.EndpointURL != full {
		t.Fatalf("after a PUT of GET the URL is %q, %v", sub.Destination.EndpointURL, err)
	}

	for _, path := range []string{"/topics/t/eventSubscriptions/s/getFullUrl", "/TOPICS/t/EVENTSUBSCRIPTIONS/s/GETFULLURL"} {
		r = ts.do(t, http.MethodPost, path, "", nil)
		mustStatus(t, r, http.StatusOK)
		if got := mustObject(t, r.Body); len(got) != 1 || got["endpointUrl"] != full {
			t.Errorf("getFullUrl = %s", r.Body)
		}
	}

	// A new URL replaces the stored one.
	ts.MustPutSubscription(t, "t", "s", webhook(nil))
	r = ts.do(t, http.MethodPost, "/topics/t/eventSubscriptions/s/getFullUrl", "", nil)
	if got := mustObject(t, r.Body)["endpointUrl"]; got != "http://127.0.0.1:9/hook" {
		t.Errorf("getFullUrl after a new URL = %v", got)
	}
}

func TestSecrets_GetFullURLErrors(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", eventgrid.CloudEventSchemaV1_0)
	ts.MustPutSubscription(t, "t", "q", map[string]any{"properties": map[string]any{
		"deliveryConfiguration": map[string]any{"deliveryMode": "Queue"},
	}})
	mustErrorContaining(t, ts.do(t, http.MethodPost, "/topics/t/eventSubscriptions/q/getFullUrl", "", nil),
		http.StatusBadRequest, eventgrid.EInvalidDestination, `"q" has no endpoint URL: it is a queue subscription`)
	mustError(t, ts.do(t, http.MethodPost, "/topics/t/eventSubscriptions/none/getFullUrl", "", nil), http.StatusNotFound, eventgrid.ESubscriptionMissing)
	mustError(t, ts.do(t, http.MethodPost, "/topics/none/eventSubscriptions/q/getFullUrl", "", nil), http.StatusNotFound, eventgrid.ETopicNotFound)
	mustError(t, ts.do(t, http.MethodGet, "/topics/t/eventSubscriptions/q/getFullUrl", "", nil), http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed)
	mustError(t, ts.do(t, http.MethodPost, "/topics/t/eventSubscriptions/$getFullUrl/q", "", nil), http.StatusNotFound, eventgrid.ENotFound)
	mustError(t, ts.doVersion(t, http.MethodPost, "/topics/t/eventSubscriptions/q/getFullUrl", "", "", nil), http.StatusBadRequest, eventgrid.EInvalidAPIVersion)
}
