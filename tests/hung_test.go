package tests_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hungListener accepts connections and never answers on them; it counts
// what it accepted and closes everything at the end of the test.
type hungListener struct {
	URL      string
	accepted atomic.Int64
}

func newHungListener(t *testing.T) *hungListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungListener{URL: "http://" + ln.Addr().String()}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
			h.accepted.Add(1)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return h
}

// hungTotal is the number of connections a set of hung listeners accepted.
func hungTotal(hs []*hungListener) int64 {
	var n int64
	for _, h := range hs {
		n += h.accepted.Load()
	}
	return n
}

// firstAccepted returns when the sink accepted the event with id, waiting
// for it.
func firstAccepted(t *testing.T, k *sink, id string, timeout time.Duration) time.Time {
	t.Helper()
	var at time.Time
	eventually(t, timeout, func() error {
		for _, r := range k.requests() {
			if r.status == http.StatusOK && strings.Contains(string(r.body), `"`+id+`"`) {
				at = r.at
				return nil
			}
		}
		return fmt.Errorf("%s not delivered yet", id)
	})
	return at
}

// TestIsolation_FreshHungSubscriptions: 150 (and 400) new subscriptions
// whose endpoints accept connections and never answer get one event each;
// once every one of them has been tried, more than the pool of 100 at once,
// a subscription that has delivered before still gets its next event
// within 2 s, and so does a new one.
func TestIsolation_FreshHungSubscriptions(t *testing.T) {
	// Serial (see doc.go): a healthy subscription's event within 2 s.
	for _, n := range []int{150, 400} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { freshHung(t, n) })
	}
}

func freshHung(t *testing.T, n int) {
	b := startBroker(t, fastEnv("broker__stopTimeoutInSeconds", "1"))
	createTopic(t, b.URL, "hung", "EventGridSchema")
	createTopic(t, b.URL, "ok", "EventGridSchema")
	healthy := newSink(t, nil)
	createSubscription(t, b.URL, "ok", "healthy", map[string]any{"destination": webhookDest(healthy.URL)})
	publish(t, b.URL, "ok", egEvents("warm", 1))
	healthy.waitAccepted(t, 1, 10*time.Second)

	var holes []*hungListener
	for i := range n {
		h := newHungListener(t)
		holes = append(holes, h)
		createSubscription(t, b.URL, "hung", fmt.Sprint("hole", i), map[string]any{"destination": webhookDest(h.URL)})
	}
	start := time.Now()
	publish(t, b.URL, "hung", egEvents("h", 1))
	eventually(t, 20*time.Second, func() error {
		if got := hungTotal(holes); got < int64(n) {
			return fmt.Errorf("%d of %d hung subscriptions tried", got, n)
		}
		return nil
	})
	t.Logf("%d hung subscriptions tried %v after the publish", n, time.Since(start).Round(time.Millisecond))

	fresh := newSink(t, nil)
	createSubscription(t, b.URL, "ok", "fresh", map[string]any{"destination": webhookDest(fresh.URL)})
	sent := time.Now()
	publish(t, b.URL, "ok", egEvents("g", 1))
	gotHealthy := firstAccepted(t, healthy, "g0", 60*time.Second).Sub(sent)
	gotFresh := firstAccepted(t, fresh, "g0", 60*time.Second).Sub(sent)
	t.Logf("beside %d fresh hung subscriptions: proven subscription got its event in %v, a new one in %v",
		n, gotHealthy.Round(time.Millisecond), gotFresh.Round(time.Millisecond))
	if gotHealthy > 2*time.Second || gotFresh > 2*time.Second {
		t.Errorf("healthy deliveries took %v (proven) and %v (new), want under 2 s", gotHealthy, gotFresh)
	}
}

// TestIsolation_WarmSubscriptionsThatHang: eight subscriptions at full
// concurrency (16 requests each, more than the pool of 100 together) whose
// endpoint starts hanging; healthy subscriptions still get their events
// within 2 s, one of them served by the same host as the hung ones, and
// the hung ones drain once their endpoint recovers.
func TestIsolation_WarmSubscriptionsThatHang(t *testing.T) {
	// Serial (see doc.go): a healthy subscription's event within 2 s.
	b := startBroker(t, fastEnv("broker__stopTimeoutInSeconds", "1", "broker__deliverTimeoutInSeconds", "30"))
	var hanging atomic.Bool
	var held atomic.Int64
	recovered := make(chan struct{})
	var mu sync.Mutex
	got := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hanging.Load() && r.URL.Path != "/neighbour" {
			held.Add(1)
			select {
			case <-recovered:
			case <-r.Context().Done():
				return
			}
		}
		var evs []struct{ ID string }
		if err := json.NewDecoder(r.Body).Decode(&evs); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, ev := range evs {
			got[r.URL.Path+" "+ev.ID] = true
		}
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	var closeOnce sync.Once
	restore := func() { closeOnce.Do(func() { close(recovered) }) }
	t.Cleanup(restore)
	delivered := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}

	createTopic(t, b.URL, "w", "EventGridSchema")
	createTopic(t, b.URL, "ok", "EventGridSchema")
	for i := range 8 {
		createSubscription(t, b.URL, "w", fmt.Sprint("warm", i), map[string]any{"destination": webhookDest(fmt.Sprint(srv.URL, "/", i))})
	}
	healthy := newSink(t, nil)
	createSubscription(t, b.URL, "ok", "healthy", map[string]any{"destination": webhookDest(healthy.URL)})
	createSubscription(t, b.URL, "ok", "neighbour", map[string]any{"destination": webhookDest(srv.URL + "/neighbour")})
	publish(t, b.URL, "ok", egEvents("warm", 1))
	healthy.waitAccepted(t, 1, 10*time.Second)
	neighbour := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		return got["/neighbour "+id]
	}
	eventually(t, 10*time.Second, func() error {
		if !neighbour("warm0") {
			return fmt.Errorf("the neighbour is not warm yet")
		}
		return nil
	})
	for i := range 5 {
		publish(t, b.URL, "w", egEvents(fmt.Sprint("a", i, "-"), 10))
	}
	eventually(t, 20*time.Second, func() error {
		if n := delivered(); n < 8*50+1 {
			return fmt.Errorf("warming up: %d of 400 delivered", n)
		}
		return nil
	})

	hanging.Store(true)
	for i := range 2 {
		publish(t, b.URL, "w", egEvents(fmt.Sprint("x", i, "-"), 50))
	}
	eventually(t, 20*time.Second, func() error {
		if n := held.Load(); n < 100 {
			return fmt.Errorf("%d hung requests", n)
		}
		return nil
	})
	sent := time.Now()
	publish(t, b.URL, "ok", egEvents("g", 1))
	took := firstAccepted(t, healthy, "g0", 60*time.Second).Sub(sent)
	eventually(t, 60*time.Second, func() error {
		if !neighbour("g0") {
			return fmt.Errorf("the neighbour has not got its event")
		}
		return nil
	})
	tookNeighbour := time.Since(sent) // an upper bound, polled
	t.Logf("beside 8 warm subscriptions hanging with %d requests: healthy event in %v, on the hung ones' host within %v",
		held.Load(), took.Round(time.Millisecond), tookNeighbour.Round(time.Millisecond))
	if took > 2*time.Second || tookNeighbour > 2*time.Second {
		t.Errorf("healthy deliveries took %v and %v (same host), want under 2 s", took, tookNeighbour)
	}

	hanging.Store(false)
	restore()
	eventually(t, 60*time.Second, func() error {
		if n := delivered(); n < 8*150+2 {
			return fmt.Errorf("after recovery: %d of 1202 delivered", n)
		}
		return nil
	})
}

// TestBudget_DeleteReleasesAtOnce: deleting a subscription, or its topic,
// whose events are all in a hung request returns them to the budget at
// once: a publish to another topic is accepted right after the delete.
func TestBudget_DeleteReleasesAtOnce(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("broker__stopTimeoutInSeconds", "1", "broker__maxQueuedEvents", "50"))
	hole := newHungListener(t)
	createTopic(t, b.URL, "hung", "EventGridSchema")
	createTopic(t, b.URL, "other", "EventGridSchema")
	createSubscription(t, b.URL, "hung", "s", map[string]any{"destination": webhookDest(hole.URL, "maxEventsPerBatch", 50)})
	live := newSink(t, nil)
	createSubscription(t, b.URL, "other", "live", map[string]any{"destination": webhookDest(live.URL)})
	publish(t, b.URL, "hung", egEvents("h", 50))
	eventually(t, 10*time.Second, func() error {
		if hole.accepted.Load() == 0 {
			return fmt.Errorf("the hung request is not in flight yet")
		}
		return nil
	})
	if code, _, body := do(t, nil, http.MethodPost, b.URL+"/topics/other/events?"+apiVersion, "application/json", egEvents("o", 1)); code != http.StatusServiceUnavailable {
		t.Fatalf("publish with the budget held by the hung request: %d %s, want 503", code, body)
	}
	mustDo(t, http.MethodDelete, b.URL+"/topics/hung/eventSubscriptions/s?"+apiVersion, "", nil, http.StatusOK)
	code, _, body := do(t, nil, http.MethodPost, b.URL+"/topics/other/events?"+apiVersion, "application/json", egEvents("o", 1))
	if code != http.StatusOK {
		t.Fatalf("publish right after the delete: %d %s, want 200", code, body)
	}
	live.waitAccepted(t, 1, 10*time.Second)

	// Deleting the topic does the same for its subscriptions.
	hole2 := newHungListener(t)
	createSubscription(t, b.URL, "hung", "s2", map[string]any{"destination": webhookDest(hole2.URL, "maxEventsPerBatch", 50)})
	publish(t, b.URL, "hung", egEvents("k", 50))
	eventually(t, 10*time.Second, func() error {
		if hole2.accepted.Load() == 0 {
			return fmt.Errorf("the second hung request is not in flight yet")
		}
		return nil
	})
	mustDo(t, http.MethodDelete, b.URL+"/topics/hung?"+apiVersion, "", nil, http.StatusOK)
	if code, _, body := do(t, nil, http.MethodPost, b.URL+"/topics/other/events?"+apiVersion, "application/json", egEvents("p", 1)); code != http.StatusOK {
		t.Fatalf("publish right after the topic's delete: %d %s, want 200", code, body)
	}
	live.waitAccepted(t, 2, 10*time.Second)
}

// rssKB reads a field of /proc/<pid>/status, in kB.
func rssKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestBudget_ConvertedCopiesMemory: 40 subscriptions that take CloudEvents
// from an EventGridSchema topic and one that takes the events as published
// (so that the events are converted, not built as their CloudEvents), their
// endpoints hung, and publishes until the broker refuses: its resident
// memory grows by less than four times broker__maxQueuedBytes, converted
// copies included.
func TestBudget_ConvertedCopiesMemory(t *testing.T) {
	// Serial (see doc.go): measures the broker's memory.
	if raceEnabled {
		t.Skip("the race detector multiplies the broker's memory; this test measures it")
	}
	const maxBytes = 8 << 20
	b := startBroker(t, fastEnv("broker__stopTimeoutInSeconds", "1", "broker__maxQueuedBytes", strconv.Itoa(maxBytes)))
	createTopic(t, b.URL, "m", "EventGridSchema")
	for i := range 40 {
		h := newHungListener(t)
		createSubscription(t, b.URL, "m", fmt.Sprint("ce", i), map[string]any{
			"eventDeliverySchema": "CloudEventSchemaV1_0", "destination": webhookDest(h.URL)})
	}
	createSubscription(t, b.URL, "m", "published", map[string]any{"destination": webhookDest(newHungListener(t).URL)})
	pid := b.cmd.Process.Pid
	before := rssKB(t, pid, "VmRSS")
	pad := strings.Repeat("x", 4000)
	accepted := 0
	for i := 0; ; i++ {
		evs := egEvents(fmt.Sprint("m", i, "-"), 32)
		for _, ev := range evs {
			ev["data"] = map[string]any{"pad": pad}
		}
		code, _, body := do(t, nil, http.MethodPost, b.URL+"/topics/m/events?"+apiVersion, "application/json", evs)
		if code == http.StatusServiceUnavailable {
			break
		}
		if code != http.StatusOK {
			t.Fatalf("publish %d: %d %s", i, code, body)
		}
		accepted += len(evs)
		if i > 2000 {
			t.Fatalf("%d events accepted and the budget of %d bytes is not full", accepted, maxBytes)
		}
	}
	after, peak := rssKB(t, pid, "VmRSS"), rssKB(t, pid, "VmHWM")
	grew := (after - before) << 10
	t.Logf("40 converting subscriptions and one not, broker__maxQueuedBytes %d MiB: %d events of about 4 KB accepted; RSS %d -> %d kB (peak %d kB), grew %.1f MiB = %.2fx the budget",
		maxBytes>>20, accepted, before, after, peak, float64(grew)/(1<<20), float64(grew)/maxBytes)
	if grew >= 4*maxBytes {
		t.Errorf("RSS grew by %d bytes, not less than 4 x broker__maxQueuedBytes (%d)", grew, 4*maxBytes)
	}
}

// TestConfig_ExponentialScaleBounded: a scale that would overflow the
// delays stops the start with an error naming the key.
func TestConfig_ExponentialScaleBounded(t *testing.T) {
	t.Parallel()
	code, out := runToExit(t, fastEnv("broker__exponentialScale", "1e9"))
	if code == 0 || !strings.Contains(out, "broker__exponentialScale") || !strings.Contains(out, "up to 1000") {
		t.Errorf("start with broker__exponentialScale 1e9: exit %d\n%s", code, out)
	}
}

// TestIsolation_HundredsOfWarmSubscriptionsHang: 300 subscriptions that
// have delivered before all start hanging at once, more than the pool and
// the parked requests together; a healthy subscription still gets its event
// within 2 s.
func TestIsolation_HundredsOfWarmSubscriptionsHang(t *testing.T) {
	// Serial (see doc.go): a healthy subscription's event within 2 s.
	b := startBroker(t, fastEnv("broker__stopTimeoutInSeconds", "1"))
	var hanging atomic.Bool
	var held atomic.Int64
	var answered atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hanging.Load() {
			held.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		answered.Add(1)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	createTopic(t, b.URL, "w", "EventGridSchema")
	createTopic(t, b.URL, "ok", "EventGridSchema")
	const n = 300
	for i := range n {
		createSubscription(t, b.URL, "w", fmt.Sprint("warm", i), map[string]any{"destination": webhookDest(fmt.Sprint(srv.URL, "/", i))})
	}
	healthy := newSink(t, nil)
	createSubscription(t, b.URL, "ok", "healthy", map[string]any{"destination": webhookDest(healthy.URL)})
	publish(t, b.URL, "ok", egEvents("warm", 1))
	publish(t, b.URL, "w", egEvents("a", 1))
	healthy.waitAccepted(t, 1, 10*time.Second)
	eventually(t, 20*time.Second, func() error {
		if got := answered.Load(); got < n {
			return fmt.Errorf("warming up: %d of %d delivered", got, n)
		}
		return nil
	})
	hanging.Store(true)
	start := time.Now()
	publish(t, b.URL, "w", egEvents("x", 1))
	eventually(t, 20*time.Second, func() error {
		if got := held.Load(); got < n {
			return fmt.Errorf("%d of %d hung requests made", got, n)
		}
		return nil
	})
	t.Logf("%d hung requests made %v after the publish", held.Load(), time.Since(start).Round(time.Millisecond))
	sent := time.Now()
	publish(t, b.URL, "ok", egEvents("g", 1))
	took := firstAccepted(t, healthy, "g0", 60*time.Second).Sub(sent)
	t.Logf("beside %d formerly healthy subscriptions hanging: healthy event in %v", n, took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("healthy delivery took %v, want under 2 s", took)
	}
}
