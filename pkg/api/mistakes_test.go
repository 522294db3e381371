package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// TestActions_Mistakes: a POST of an action the resource does not have
// gets 400 UnknownAction listing those it has; an action written as a path
// segment gets 404 saying to write it after a colon; another method on an
// action still gets 405.
func TestActions_Mistakes(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", eventgrid.CloudEventSchemaV1_0)
	const subActions = ":receive, :acknowledge, :release, :reject, :renewLock, :retryNow, :redrive, :pause, :resume and :purge"
	for _, c := range []struct {
		name, method, path string
		status             int
		code               string
		parts              []string
	}{
		{"SubscriptionUnknown", http.MethodPost, "/topics/t/eventSubscriptions/s:bogus", 400, eventgrid.EUnknownAction,
			[]string{`":bogus" is not an action of an event subscription; its actions are ` + subActions + "."}},
		{"TopicUnknown", http.MethodPost, "/topics/t:bogus", 400, eventgrid.EUnknownAction,
			[]string{`":bogus" is not an action of a topic; its actions are :publish.`}},
		{"SubscriptionActionOnTopic", http.MethodPost, "/topics/t:receive", 400, eventgrid.EUnknownAction,
			[]string{`":receive" is not an action of a topic`}},
		{"SlashInsteadOfColon", http.MethodPost, "/topics/t/eventSubscriptions/s/retryNow", 404, eventgrid.ENotFound,
			[]string{"No API matches POST /topics/t/eventSubscriptions/s/retryNow: retryNow is an action, written after a colon: POST /topics/t/eventSubscriptions/s:retryNow."}},
		{"SlashAnyCase", http.MethodPost, "/topics/t/eventSubscriptions/s/RECEIVE", 404, eventgrid.ENotFound,
			[]string{"POST /topics/t/eventSubscriptions/s:receive."}},
		{"TopicSlash", http.MethodPost, "/topics/t/publish", 404, eventgrid.ENotFound,
			[]string{"publish is an action, written after a colon: POST /topics/t:publish."}},
		{"GetAction", http.MethodGet, "/topics/t/eventSubscriptions/s:receive", 405, eventgrid.EMethodNotAllowed,
			[]string{":receive takes POST only."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustErrorContaining(t, ts.do(t, c.method, c.path, ctJSON, nil), c.status, c.code, c.parts...)
		})
	}
	// A subscription may be named like an action: its views are its own.
	ts.MustPutSubscription(t, "t", "receive", webhook(nil))
	mustStatus(t, ts.do(t, http.MethodPost, "/topics/t/eventSubscriptions/receive/getFullUrl", ctJSON, nil), http.StatusOK)
}

// TestErrors_ReadAsWritten: an error message is sent as it reads, a
// placeholder's angle brackets included, not as HTML escapes.
func TestErrors_ReadAsWritten(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", "")
	r := ts.do(t, http.MethodPut, "/topics/t/eventSubscriptions/s", ctJSON,
		dest(`{"endpointType":"StorageQueue","properties":{"queueName":"q1","connectionString":"AccountName=<account>;AccountKey=<key>"}}`))
	mustErrorContaining(t, r, http.StatusBadRequest, eventgrid.EInvalidDestination)
	if want := `connectionString holds the placeholder <account>: replace every placeholder with your own value.`; !strings.Contains(string(r.Body), want) {
		t.Errorf("body %s, want it to hold %s as it reads", r.Body, want)
	}
}
