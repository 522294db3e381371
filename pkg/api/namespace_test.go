package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/pull"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

const nsVersion = "2024-06-01"

// queueServer is a test server whose queue subscriptions are kept by a real
// pull.Store, with topic "t" and queue subscription "q".
type queueServer struct {
	*testServer
	store *pull.Store
}

func newQueueServer(t *testing.T, o pull.Options, opts ...serverOption) *queueServer {
	t.Helper()
	store := pull.New(o, zerolog.Nop())
	t.Cleanup(store.Close)
	ts := MustOpenServer(t, append([]serverOption{withAPI(func(o *api.Options) { o.Queues = store })}, opts...)...)
	ts.Observer.PutFn = store.SubscriptionPut
	ts.Observer.DeletedFn = store.SubscriptionDeleted
	ts.MustPutTopic(t, "t", eventgrid.CloudEventSchemaV1_0)
	ts.MustPutSubscription(t, "t", "q", map[string]any{"properties": map[string]any{
		"deliveryConfiguration": map[string]any{"deliveryMode": "Queue"}}})
	return &queueServer{ts, store}
}

// seed queues n events of body for "q", all sharing body.
func (qs *queueServer) seed(t *testing.T, n int, body []byte) {
	t.Helper()
	sub, err := qs.Registry.Subscription(t.Context(), "t", "q")
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]eventgrid.Delivery, n)
	for i := range ds {
		ds[i] = eventgrid.Delivery{Event: &eventgrid.Event{Body: body, Accepted: time.Now()}, Subscriptions: []*eventgrid.EventSubscription{sub}}
	}
	b, err := qs.store.Prepare(eventgrid.Topic{Name: "t", InputSchema: eventgrid.CloudEventSchemaV1_0}, ds)
	if err != nil {
		t.Fatal(err)
	}
	b.Commit()
}

func (qs *queueServer) settle(t *testing.T, action string, body any) response {
	t.Helper()
	return qs.doVersion(t, http.MethodPost, "/topics/t/eventSubscriptions/q:"+action, nsVersion, ctJSON, body)
}

type settleAnswer struct {
	SucceededLockTokens []string
	FailedLockTokens    []struct {
		LockToken string
		Error     struct{ Code, Message string }
	}
}

// TestSettle_AllFailed: a well-formed settlement whose every token failed
// answers 200 with each token in failedLockTokens, for every operation.
func TestSettle_AllFailed(t *testing.T) {
	qs := newQueueServer(t, pull.Options{})
	unknown := "AAAAAAAAAAAAAAAAAAAAAA" // well formed, never handed out
	for _, action := range []string{"acknowledge", "release", "reject", "renewLock"} {
		r := qs.settle(t, action, map[string]any{"lockTokens": []string{"bogus", unknown}})
		mustStatus(t, r, http.StatusOK)
		var a settleAnswer
		brokertest.MustUnmarshal(t, r.Body, &a)
		if a.SucceededLockTokens == nil || len(a.SucceededLockTokens) != 0 || len(a.FailedLockTokens) != 2 ||
			a.FailedLockTokens[0].Error.Code != "BadRequest" || a.FailedLockTokens[1].Error.Code != "TokenLost" || a.FailedLockTokens[1].LockToken != unknown {
			t.Errorf("%s: %s; want no success and both tokens failed", action, r.Body)
		}
	}
}

// TestSettle_Malformed: a malformed settlement body gets 400 naming what
// is wrong, lockTokens named twice included.
func TestSettle_Malformed(t *testing.T) {
	qs := newQueueServer(t, pull.Options{})
	for body, want := range map[string]string{
		`{"lockTokens":["a"],"lockTokens":["b"]}`: `lockTokens\" more than once`,
		`{"lockTokens":["a"],"LockTokens":["b"]}`: `more than once`,
		`{"lockTokens":[]}`:                       "at least one lock token",
		`{}`:                                      "lockTokens is required",
		`{"lockTokens":"a"}`:                      "array of strings",
		`["a"]`:                                   "JSON object",
		`{"lockTokens":[`:                         "not valid JSON",
	} {
		r := qs.settle(t, "acknowledge", body)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), want) {
			t.Errorf("%s: %d %s; want 400 saying %q", body, r.Status, r.Body, want)
		}
	}
}

// TestSettle_LongTokenEchoBounded: a failed token is echoed cut to a
// bounded length, so a client cannot make the answer as large as its
// request.
func TestSettle_LongTokenEchoBounded(t *testing.T) {
	qs := newQueueServer(t, pull.Options{})
	long := strings.Repeat("é", 50000) // 100 kB
	r := qs.settle(t, "acknowledge", map[string]any{"lockTokens": []string{long, long}})
	mustStatus(t, r, http.StatusOK)
	var a settleAnswer
	brokertest.MustUnmarshal(t, r.Body, &a)
	if len(r.Body) > 1000 || len(a.FailedLockTokens) != 2 {
		t.Fatalf("the answer takes %d bytes for 2 failed tokens of 100 kB; want under 1000", len(r.Body))
	}
	if tok := a.FailedLockTokens[0].LockToken; !strings.HasPrefix(long, strings.TrimSuffix(tok, "…")) || !strings.HasSuffix(tok, "…") {
		t.Fatalf("echoed token %q; want the token's start marked as cut", tok)
	}
}

// TestNamespaceActions_OtherMethods: a namespace action asked with a
// method other than POST gets 405 saying so, and never names the path the
// router sees.
func TestNamespaceActions_OtherMethods(t *testing.T) {
	qs := newQueueServer(t, pull.Options{})
	for _, path := range []string{"/topics/t/eventSubscriptions/q:receive", "/topics/t/eventsubscriptions/q:acknowledge", "/topics/t:publish"} {
		for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
			for _, version := range []string{nsVersion, edgeVersion} {
				r := qs.doVersion(t, method, path, version, ctJSON, nil)
				msg := mustError(t, r, http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed)
				if strings.Contains(string(r.Body), "$") || !strings.Contains(msg, "POST") || r.Header.Get("Allow") != http.MethodPost {
					t.Errorf("%s %s: %s, Allow %q; want 405 saying POST, without the rewritten path", method, path, r.Body, r.Header.Get("Allow"))
				}
			}
		}
	}
}
