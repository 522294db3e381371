package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

const nsVersion = "2024-06-01"

// queueServer is a test server whose queue subscriptions are kept by a real
// queue.Store, with topic "t" and queue subscription "q".
type queueServer struct {
	*testServer
	store *queue.Store
}

func newQueueServer(t testing.TB, o queue.Options, opts ...serverOption) *queueServer {
	t.Helper()
	store := queue.New(o, zerolog.Nop())
	t.Cleanup(func() { _ = store.Close(context.Background()) })
	ts := MustOpenServer(t, append([]serverOption{withServices(func(o *api.Services) { o.Queues = store })}, opts...)...)
	ts.Observer.PutFn = store.SubscriptionPut
	ts.Observer.DeletedFn = store.SubscriptionDeleted
	ts.MustPutTopic(t, "t", eventgrid.CloudEventSchemaV1_0)
	ts.MustPutSubscription(t, "t", "q", map[string]any{"properties": map[string]any{
		"deliveryConfiguration": map[string]any{"deliveryMode": "Queue"}}})
	return &queueServer{ts, store}
}

// seed queues n events of body for "q", all sharing body.
func (qs *queueServer) seed(t testing.TB, n int, body []byte) {
	t.Helper()
	sub, err := qs.Registry.Subscription(t.Context(), "t", "q")
	if err != nil {
		t.Fatal(err)
	}
	ds := make([]eventgrid.Delivery, n)
	for i := range ds {
		ds[i] = eventgrid.Delivery{Event: &eventgrid.Event{Body: body, Accepted: time.Now()}, Subscriptions: []*eventgrid.EventSubscription{sub}}
	}
	d := dispatch.New(dispatch.Options{Queues: qs.store})
	d.SubscriptionPut(sub)
	if err := d.Publish(t.Context(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "t", InputSchema: eventgrid.CloudEventSchemaV1_0}, Deliveries: ds}); err != nil {
		t.Fatal(err)
	}
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
	qs := newQueueServer(t, queue.Options{})
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
	qs := newQueueServer(t, queue.Options{})
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
	qs := newQueueServer(t, queue.Options{})
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
	qs := newQueueServer(t, queue.Options{})
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

// TestReceive_Answer: a receive answer carries each event whole, as
// published, after its broker properties, with its length declared.
func TestReceive_Answer(t *testing.T) {
	qs := newQueueServer(t, queue.Options{})
	body := []byte(`{"specversion":"1.0","id":"1","source":"s","type":"t","data":{"x":"` + strings.Repeat("y", 10000) + `"}}`)
	qs.seed(t, 3, body)
	r := qs.doVersion(t, http.MethodPost, "/topics/t/eventSubscriptions/q:receive?maxEvents=10", nsVersion, "", nil)
	mustStatus(t, r, http.StatusOK)
	if cl := r.Header.Get("Content-Length"); cl != strconv.Itoa(len(r.Body)) {
		t.Errorf("Content-Length %q for a body of %d bytes", cl, len(r.Body))
	}
	var a struct {
		Value []struct {
			BrokerProperties struct {
				LockToken     string
				DeliveryCount int
			}
			Event json.RawMessage
		}
	}
	brokertest.MustUnmarshal(t, r.Body, &a)
	if len(a.Value) != 3 {
		t.Fatalf("received %d events, want 3", len(a.Value))
	}
	for _, v := range a.Value {
		if !bytes.Equal(v.Event, body) || v.BrokerProperties.DeliveryCount != 1 || len(v.BrokerProperties.LockToken) != 22 {
			t.Fatalf("received %+v", v.BrokerProperties)
		}
	}
}

// TestReceive_WaitingLimit: beyond the limit of waiting receives a receive
// that would wait gets 503 with Retry-After, naming the limit.
func TestReceive_WaitingLimit(t *testing.T) {
	qs := newQueueServer(t, queue.Options{MaxWaiting: 1})
	done := make(chan response, 1)
	go func() {
		done <- qs.doVersion(t, http.MethodPost, "/topics/t/eventSubscriptions/q:receive?maxWaitTime=60", nsVersion, "", nil)
	}()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if c, _ := qs.store.Counts(mustSub(t, qs)); c.Waiting != 1 {
			return fmt.Errorf("%d receives waiting", c.Waiting)
		}
		return nil
	})
	r := qs.doVersion(t, http.MethodPost, "/topics/t/eventSubscriptions/q:receive?maxWaitTime=60", nsVersion, "", nil)
	msg := mustError(t, r, http.StatusServiceUnavailable, eventgrid.EUnavailable)
	if !strings.Contains(msg, "broker__maxWaitingReceives") || r.Header.Get("Retry-After") == "" {
		t.Fatalf("second waiting receive: %s, Retry-After %q", msg, r.Header.Get("Retry-After"))
	}
	qs.seed(t, 1, []byte(`{"id":"1"}`))
	if r := <-done; r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"id":"1"`) {
		t.Fatalf("the waiting receive: %d %s", r.Status, r.Body)
	}
}

// TestReceive_ClientShare: one client may have at most half of
// broker__maxWaitingReceives in progress, so that it cannot keep others
// out; another client's receive still waits.
func TestReceive_ClientShare(t *testing.T) {
	qs := newQueueServer(t, queue.Options{MaxWaiting: 4}, withAPI(func(o *api.Options) { o.MaxWaitingReceives = 4 }))
	const path = "/topics/t/eventSubscriptions/q:receive?maxWaitTime=60"
	done := make(chan response, 3)
	for range 2 {
		go func() { done <- qs.doVersion(t, http.MethodPost, path, nsVersion, "", nil) }()
	}
	waiting := func(n int) func() error {
		return func() error {
			if c, _ := qs.store.Counts(mustSub(t, qs)); c.Waiting != n {
				return fmt.Errorf("%d receives waiting, want %d", c.Waiting, n)
			}
			return nil
		}
	}
	brokertest.Eventually(t, 5*time.Second, waiting(2))
	r := qs.doVersion(t, http.MethodPost, path, nsVersion, "", nil)
	msg := mustError(t, r, http.StatusServiceUnavailable, eventgrid.EUnavailable)
	if !strings.Contains(msg, "at most 2 receives in progress (half of broker__maxWaitingReceives)") || r.Header.Get("Retry-After") == "" {
		t.Fatalf("a third receive of one client: %s, Retry-After %q", msg, r.Header.Get("Retry-After"))
	}
	// Another client, from another loopback address, still waits.
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	t.Cleanup(other.CloseIdleConnections)
	go func() {
		st, h, b := brokertest.Do(t, other, http.MethodPost, qs.url(path, nsVersion), "", nil)
		done <- response{st, h, b}
	}()
	brokertest.Eventually(t, 5*time.Second, waiting(3))
	qs.seed(t, 3, []byte(`{"id":"1"}`))
	for range 3 {
		if r := <-done; r.Status != http.StatusOK {
			t.Fatalf("a waiting receive: %d %s", r.Status, r.Body)
		}
	}
}

// TestReceive_EndsAtClose: a receive waiting for events when the server
// closes answers at once with none, and the close does not wait for its
// long poll; the queue itself stays open.
func TestReceive_EndsAtClose(t *testing.T) {
	qs := newQueueServer(t, queue.Options{})
	done := make(chan response, 1)
	go func() {
		done <- qs.doVersion(t, http.MethodPost, "/topics/t/eventSubscriptions/q:receive?maxWaitTime=120", nsVersion, "", nil)
	}()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if c, _ := qs.store.Counts(mustSub(t, qs)); c.Waiting != 1 {
			return fmt.Errorf("%d receives waiting", c.Waiting)
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := qs.Server.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v with a receive waiting", d)
	}
	if r := <-done; r.Status != http.StatusOK || string(r.Body) != `{"value":[]}` {
		t.Fatalf("the waiting receive: %d %s; want 200 with no events", r.Status, r.Body)
	}
	if _, ok := qs.store.Counts(mustSub(t, qs)); !ok {
		t.Fatal("closing the API closed the queue")
	}
}

func mustSub(t *testing.T, qs *queueServer) *eventgrid.EventSubscription {
	t.Helper()
	sub, err := qs.Registry.Subscription(t.Context(), "t", "q")
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// slowReceive sends a receive of up to 100 events on a raw connection and
// never reads the answer; it returns the connection.
func slowReceive(t *testing.T, base string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /topics/t/eventSubscriptions/q:receive?api-version=%s&maxEvents=100 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", nsVersion)
	return conn
}

// readCut reads what the server sent on conn and reports whether the
// answer ended before the length it declared.
func readCut(t *testing.T, conn net.Conn) (got, declared int, cut bool) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufioReader(conn), nil)
	if err != nil {
		return 0, 0, true
	}
	n, err := io.Copy(io.Discard, resp.Body)
	return int(n), int(resp.ContentLength), err != nil && int(n) < int(resp.ContentLength)
}

// bigEvents queues 32 events of 1 MB, more than the kernel's socket
// buffers take for a client that does not read.
func (qs *queueServer) bigEvents(t *testing.T) {
	t.Helper()
	qs.seed(t, 32, []byte(`{"data":"`+strings.Repeat("x", 1<<20)+`"}`))
}

// waitLocked waits until the 32 events of bigEvents are locked.
func waitLocked(t *testing.T, store *queue.Store, sub *eventgrid.EventSubscription) {
	t.Helper()
	brokertest.Eventually(t, 10*time.Second, func() error {
		if c, _ := store.Counts(sub); c.Locked != 32 {
			return fmt.Errorf("counts %+v; want the events locked", c)
		}
		return nil
	})
}

// TestReceive_SlowReaderCut: a client that does not read its answer is cut
// off when the events' locks expire, and the events are received again.
func TestReceive_SlowReaderCut(t *testing.T) {
	qs := newQueueServer(t, queue.Options{TimeScale: 0.02}) // 60 s locks last 1.2 s
	qs.bigEvents(t)
	conn := slowReceive(t, qs.URL)
	sub := mustSub(t, qs)
	waitLocked(t, qs.store, sub)
	brokertest.Eventually(t, 10*time.Second, func() error {
		if c, _ := qs.store.Counts(sub); c.Available != 32 {
			return fmt.Errorf("counts %+v; want the events available again once their locks expired", c)
		}
		return nil
	})
	got, declared, cut := readCut(t, conn)
	t.Logf("the slow client got %d of %d bytes", got, declared)
	if !cut {
		t.Fatalf("the slow client got %d of %d bytes; want the answer cut off", got, declared)
	}
	r := qs.doVersion(t, http.MethodPost, "/topics/t/eventSubscriptions/q:receive?maxEvents=1", nsVersion, "", nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"deliveryCount":2`) {
		t.Fatalf("receive after the cut: %d %.200s", r.Status, r.Body)
	}
}

// TestClose_CutsSlowReceive: Close cuts a receive answer its client does
// not read once the grace has passed, long before the events' locks
// expire.
func TestClose_CutsSlowReceive(t *testing.T) {
	store := queue.New(queue.Options{}, zerolog.Nop()) // 60 s locks
	t.Cleanup(func() { _ = store.Close(context.Background()) })
	opts := api.DefaultOptions()
	opts.ReceiveGrace = 100 * time.Millisecond
	reg := queueRegistry(t, store)
	srv := api.New(opts, api.Services{Resources: reg, Publisher: registry.NewRouter(reg, &mock.Recorder{}), Queues: store}, zerolog.Nop())
	addr, err := srv.Open("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	qs := &queueServer{testServer: &testServer{URL: "http://" + addr.String(), Registry: reg, Client: &http.Client{}}, store: store}
	qs.bigEvents(t)
	conn := slowReceive(t, qs.URL)
	waitLocked(t, store, mustSub(t, qs))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	took := time.Since(start)
	t.Logf("Close returned after %v with a slow reader", took)
	if took > 10*time.Second {
		t.Fatalf("Close took %v with a 100 ms grace", took)
	}
	if _, _, cut := readCut(t, conn); !cut {
		t.Fatal("the slow reader's answer was not cut")
	}
}

// queueRegistry is a registry that tells store of its subscriptions, with
// topic "t" and queue subscription "q".
func queueRegistry(t *testing.T, store *queue.Store) *registry.Registry {
	t.Helper()
	reg := registry.New(registry.DefaultOptions(), store)
	if _, _, err := reg.PutTopic(t.Context(), eventgrid.Topic{Name: "t", InputSchema: eventgrid.CloudEventSchemaV1_0}); err != nil {
		t.Fatal(err)
	}
	q := eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: time.Hour}
	if _, _, err := reg.PutSubscription(t.Context(), eventgrid.EventSubscription{Topic: "t", Name: "q", Queue: &q}); err != nil {
		t.Fatal(err)
	}
	return reg
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
