package tests_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// blackhole is an endpoint that accepts connections and never answers,
// until it is restored: then it closes what it held and serves HTTP with a
// sink from there on.
type blackhole struct {
	ln   net.Listener
	URL  string
	sink *sink

	mu       sync.Mutex
	restored bool
	held     []net.Conn
	conns    chan net.Conn
	srv      *http.Server
}

func newBlackhole(t *testing.T) *blackhole {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &blackhole{ln: ln, URL: "http://" + ln.Addr().String(), conns: make(chan net.Conn)}
	h.sink = newSink(t, nil) // records what the restored endpoint accepts
	h.srv = &http.Server{Handler: h.sink.Config.Handler}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(h.conns)
				return
			}
			h.mu.Lock()
			if !h.restored {
				h.held = append(h.held, c)
				h.mu.Unlock()
				continue
			}
			h.mu.Unlock()
			h.conns <- c
		}
	}()
	go func() { _ = h.srv.Serve(chanListener{h}) }()
	t.Cleanup(func() {
		ln.Close()
		h.srv.Close()
		h.mu.Lock()
		for _, c := range h.held {
			c.Close()
		}
		h.mu.Unlock()
	})
	return h
}

// restore makes the endpoint answer: held connections are closed, new ones
// are served.
func (h *blackhole) restore() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.restored = true
	for _, c := range h.held {
		c.Close()
	}
	h.held = nil
}

// chanListener hands the blackhole's served connections to http.Server.
type chanListener struct{ h *blackhole }

func (l chanListener) Accept() (net.Conn, error) {
	c, ok := <-l.h.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l chanListener) Close() error   { return nil }
func (l chanListener) Addr() net.Addr { return l.h.ln.Addr() }

// TestIsolation_BlackHoledSubscribers: thirty subscriptions whose endpoints
// accept connections and never answer, next to a healthy one, with the
// default concurrency settings. The healthy one gets every event within
// seconds; the black-holed ones keep theirs queued and drain once their
// endpoints come back.
func TestIsolation_BlackHoledSubscribers(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__deliverTimeoutInSeconds", "5", "broker__stopTimeoutInSeconds", "1"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	createTopic(t, b.URL, "h", "EventGridSchema")
	var holes []*blackhole
	for i := range 30 {
		h := newBlackhole(t)
		holes = append(holes, h)
		createSubscription(t, b.URL, "t", fmt.Sprint("hole", i), map[string]any{"destination": webhookDest(h.URL)})
	}
	for i := range 10 {
		publish(t, b.URL, "t", egEvents(fmt.Sprint("b", i, "-"), 5))
	}
	healthy := newSink(t, nil)
	createSubscription(t, b.URL, "h", "healthy", map[string]any{"destination": webhookDest(healthy.URL)})
	start := time.Now()
	for i := range 50 {
		publish(t, b.URL, "h", egEvents(fmt.Sprint("g", i, "-"), 10))
	}
	healthy.waitAccepted(t, 500, 10*time.Second)
	t.Logf("healthy subscription got 500 events in %v next to 30 black-holed ones", time.Since(start))
	for _, h := range holes {
		if n := len(h.sink.requests()); n != 0 {
			t.Fatalf("a black-holed endpoint answered %d requests before being restored", n)
		}
	}
	for _, h := range holes {
		h.restore()
	}
	for _, h := range holes {
		h.sink.waitAccepted(t, 50, 30*time.Second)
	}
}

// TestIsolation_SlowSubscriber: a subscriber that answers 200 just under the
// delivery timeout next to a healthy one.
func TestIsolation_SlowSubscriber(t *testing.T) {
	// Serial (see doc.go): answers taking 1.4 s must stay within the 2 s delivery timeout.
	// The margin under the timeout (600 ms) leaves room for a loaded
	// machine: a 200 that arrives late would be retried and counted twice.
	b := startBroker(t, fastEnv("broker__deliverTimeoutInSeconds", "2"))
	slow := newSink(t, func(int, *http.Request) int {
		time.Sleep(1400 * time.Millisecond) // the subscriber's own slowness
		return http.StatusOK
	})
	healthy := newSink(t, nil)
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "slow", map[string]any{"destination": webhookDest(slow.URL)})
	createSubscription(t, b.URL, "t", "healthy", map[string]any{"destination": webhookDest(healthy.URL)})
	for i := range 6 {
		publish(t, b.URL, "t", egEvents(fmt.Sprint("e", i, "-"), 10))
	}
	healthy.waitAccepted(t, 60, 5*time.Second)
	got := slow.waitAccepted(t, 60, 60*time.Second)
	for id, n := range got {
		if n != 1 {
			t.Errorf("slow subscriber got %s %d times; its 200s came within the timeout", id, n)
		}
	}
}

// TestIsolation_DeadSubscriberShare: a dead subscriber fills its own share
// of the queue budget; only requests that would queue for it are refused,
// naming it, while other topics and subscriptions keep accepting.
func TestIsolation_DeadSubscriberShare(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__maxQueuedEventsPerSubscription", "20", "broker__backoffIntervals", "1h,1h"))
	dead := newSink(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	live := newSink(t, nil)
	createTopic(t, b.URL, "shared", "EventGridSchema")
	createTopic(t, b.URL, "other", "EventGridSchema")
	createTopic(t, b.URL, "nobody", "EventGridSchema")
	createSubscription(t, b.URL, "shared", "dead", map[string]any{"destination": webhookDest(dead.URL)})
	createSubscription(t, b.URL, "other", "live", map[string]any{"destination": webhookDest(live.URL)})
	for i := range 4 {
		publish(t, b.URL, "shared", egEvents(fmt.Sprint("d", i, "-"), 5))
	}
	code, h, body := do(t, nil, http.MethodPost, b.URL+"/topics/shared/events?"+apiVersion, "application/json", egEvents("x", 1))
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(string(body), "dead") {
		t.Errorf("publish for the full subscription: %d %q %s; want 503 with Retry-After naming it", code, h.Get("Retry-After"), body)
	}
	// 50 events in all, more than the live subscription's share of 20: each
	// batch waits until the ones before it are delivered, so the share is
	// never full however slowly the machine delivers.
	for i := range 10 {
		publish(t, b.URL, "other", egEvents(fmt.Sprint("o", i, "-"), 5))
		publish(t, b.URL, "nobody", egEvents(fmt.Sprint("n", i, "-"), 5))
		live.waitAccepted(t, 5*(i+1), 10*time.Second)
	}

	// A request that could never fit gets a permanent error naming the limit.
	code, h, body = do(t, nil, http.MethodPost, b.URL+"/topics/other/events?"+apiVersion, "application/json", egEvents("big", 21))
	var env struct {
		Error struct {
			Details struct{ Code, Message string }
		}
	}
	_ = json.Unmarshal(body, &env)
	if code != http.StatusRequestEntityTooLarge || h.Get("Retry-After") != "" || env.Error.Details.Code != "PayloadTooLarge" ||
		!strings.Contains(env.Error.Details.Message, "broker__maxQueuedEventsPerSubscription") {
		t.Errorf("a request that can never fit: %d Retry-After %q %s; want 413 naming the limit", code, h.Get("Retry-After"), body)
	}
}
