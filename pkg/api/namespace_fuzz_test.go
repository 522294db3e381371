package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// settleKinds are the settlement actions, by the fuzzer's choice.
var settleKinds = []string{"acknowledge", "release", "reject", "renewLock"}

// FuzzSettle receives with arbitrary parameters and settles with arbitrary
// bodies, in which "$0" and "$1" stand for the lock tokens just received.
// The answers are 200 or a 400 error envelope, never another status;
// receive takes exactly the parameters strconv reads in range; and a
// settlement answers for every lock token it was given, each once, as
// succeeded or failed.
func FuzzSettle(f *testing.F) {
	f.Add("2", "", uint8(0), `{"lockTokens":["$0","$1"]}`, "")
	f.Add("", "10", uint8(1), `{"lockTokens":["$0","$0","bogus"]}`, "60")
	f.Add("100", " 120 ", uint8(2), `{"LockTokens":["$1"]}`, "")
	f.Add("0", "", uint8(3), `{"lockTokens":["$0"]}`, "")
	f.Add("1", "9", uint8(1), `{"lockTokens":[]}`, "5")
	f.Add("+1", "", uint8(0), `{"lockTokens":"$0"}`, "")
	f.Add("1", "", uint8(0), `not json`, "")
	f.Add("1", "", uint8(1), `{"lockTokens":["$0"]}`, "3600")
	h, reg := fuzzNamespace(f)
	f.Fuzz(func(t *testing.T, maxEvents, maxWait string, kind uint8, body, delay string) {
		sub := newQueueSubscription(t, reg)
		defer func() { _ = reg.DeleteSubscription(context.Background(), "t", sub) }()
		call(t, h, "/topics/t:publish", nil, `[{"specversion":"1.0","id":"1","source":"/s","type":"T"},{"specversion":"1.0","id":"2","source":"/s","type":"T"}]`)

		q := url.Values{}
		for name, v := range map[string]string{"maxEvents": maxEvents, "maxWaitTime": maxWait} {
			if v != "" {
				q.Set(name, v)
			}
		}
		code, got := call(t, h, "/topics/t/eventSubscriptions/"+sub+":receive", q, "")
		valid := inRange(maxEvents, 1, 100) && inRange(maxWait, 10, 120)
		if (code == http.StatusOK) != valid {
			t.Fatalf("receive maxEvents=%q maxWaitTime=%q: %d %s", maxEvents, maxWait, code, got)
		}
		var tokens []string
		if valid {
			var r struct {
				Value []struct{ BrokerProperties struct{ LockToken string } }
			}
			if err := json.Unmarshal(got, &r); err != nil {
				t.Fatal(err)
			}
			for _, v := range r.Value {
				tokens = append(tokens, v.BrokerProperties.LockToken)
			}
		}
		for i := range 2 {
			tok := "no-token"
			if i < len(tokens) {
				tok = tokens[i]
			}
			body = strings.ReplaceAll(body, "$"+strconv.Itoa(i), tok)
		}
		q = url.Values{}
		if delay != "" {
			q.Set("releaseDelayInSeconds", delay)
		}
		k := settleKinds[int(kind)%len(settleKinds)]
		code, got = call(t, h, "/topics/t/eventSubscriptions/"+sub+":"+k, q, body)
		var req struct{ LockTokens []string }
		var res struct {
			SucceededLockTokens []string
			FailedLockTokens    []struct{ LockToken string }
		}
		if json.Unmarshal(got, &res) != nil || res.SucceededLockTokens == nil {
			return // refused as a whole (call checked the envelope)
		}
		// A well-formed settlement answers 200 whatever the tokens' fates.
		if err := json.Unmarshal([]byte(body), &req); err != nil || code != http.StatusOK {
			t.Fatalf("%s of %s: %d %s", k, body, code, got)
		}
		answered := slices.Clone(res.SucceededLockTokens)
		for _, f := range res.FailedLockTokens {
			answered = append(answered, f.LockToken)
		}
		asked := make([]string, len(req.LockTokens))
		for i, tok := range req.LockTokens {
			asked[i] = echoed(tok)
		}
		slices.Sort(answered)
		slices.Sort(asked)
		if !slices.Equal(answered, asked) {
			t.Fatalf("%s of %q answers for %q", k, req.LockTokens, answered)
		}
	})
}

// echoed is a failed lock token as a settlement's answer echoes it: cut
// after 64 bytes, on a character boundary, and marked with "…".
func echoed(tok string) string {
	if len(tok) <= 64 {
		return tok
	}
	n := 64
	for n > 0 && !utf8.RuneStart(tok[n]) {
		n--
	}
	return tok[:n] + "…"
}

// fuzzNamespace returns the handler of an API server with queue
// subscriptions, and its registry, which holds the CloudEvents topic "t".
func fuzzNamespace(f *testing.F) (http.Handler, *registry.Registry) {
	store := queue.New(queue.Options{}, zerolog.Nop())
	f.Cleanup(func() { _ = store.Close(context.Background()) })
	d := dispatch.New(dispatch.Options{Queues: store})
	reg := registry.New(registry.DefaultOptions(), d)
	if _, _, err := reg.PutTopic(context.Background(), eventgrid.Topic{Name: "t", InputSchema: eventgrid.CloudEventSchemaV1_0}); err != nil {
		f.Fatal(err)
	}
	srv := api.New(api.DefaultOptions(), api.Services{Resources: reg, Publisher: registry.NewRouter(reg, d), Queues: store}, zerolog.Nop())
	return srv.Handler(), reg
}

// newQueueSubscription puts a queue subscription of "t" and returns its
// name; each fuzzed input gets a fresh one.
func newQueueSubscription(t *testing.T, reg *registry.Registry) string {
	sub := eventgrid.EventSubscription{Topic: "t", Name: "q", Queue: &eventgrid.QueueConfig{
		ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: eventgrid.DefaultQueueEventTTL}}
	if _, _, err := reg.PutSubscription(context.Background(), sub); err != nil {
		t.Fatal(err)
	}
	return sub.Name
}

// call POSTs body to path with query q and the namespace api-version, and
// returns the status and body; it fails t unless the status is 200 or a 400
// with the error envelope.
func call(t *testing.T, h http.Handler, path string, q url.Values, body string) (int, []byte) {
	t.Helper()
	if q == nil {
		q = url.Values{}
	}
	q.Set("api-version", "2024-06-01")
	ct := "application/json"
	if strings.HasSuffix(path, ":publish") {
		ct = "application/cloudevents-batch+json"
	}
	r := httptest.NewRequest(http.MethodPost, path+"?"+q.Encode(), strings.NewReader(body))
	r.Header.Set("Content-Type", ct)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	switch w.Code {
	case http.StatusOK:
	case http.StatusBadRequest:
		var env struct {
			Error struct {
				Details struct{ Code, Message string }
			}
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err == nil && env.Error.Details.Code != "" {
			break
		}
		if strings.Contains(w.Body.String(), "succeededLockTokens") {
			break // a settlement none of whose tokens succeeded
		}
		t.Fatalf("POST %s: 400 without the error envelope: %s", path, w.Body)
	default:
		t.Fatalf("POST %s?%s: %d %s", path, q.Encode(), w.Code, w.Body)
	}
	return w.Code, w.Body.Bytes()
}

// inRange reports whether v, an optional integer query parameter, is
// absent or an integer within [lo, hi] as strconv reads it.
func inRange(v string, lo, hi int) bool {
	if v == "" {
		return true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return err == nil && n >= int64(lo) && n <= int64(hi)
}
