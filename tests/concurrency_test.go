package tests_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The default broker__maxConcurrentDeliveriesPerSubscription.
const perSubscription = 16

// gauge is an endpoint that holds every request for hold and answers it
// with what answer says for the n-th request (from 1) and the ids of its
// events: nil answers 200, and 0 holds the request until the broker gives
// up on it. It records how many requests it held at once (those it never
// answers aside): at most, at most since mark was called, and at most while
// a request it never answers had been held for half a second. A 429
// carries Retry-After: 3.
type gauge struct {
	*httptest.Server
	hold   time.Duration
	answer func(n int, ids []string) int

	n, now atomic.Int64
	mu     sync.Mutex
	peak   int64
	since  int64 // peak since mark
	beside int64 // peak beside a request held for half a second
	hung   map[*http.Request]time.Time
	ok     map[string]int
	okAt   map[string][]time.Time
	failAt map[string][]time.Time
}

func newGauge(t *testing.T, hold time.Duration, answer func(n int, ids []string) int) *gauge {
	g := &gauge{hold: hold, answer: answer, hung: map[*http.Request]time.Time{},
		ok: map[string]int{}, okAt: map[string][]time.Time{}, failAt: map[string][]time.Time{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

func (g *gauge) serve(w http.ResponseWriter, r *http.Request) {
	n := g.n.Add(1)
	body, _ := io.ReadAll(r.Body)
	var evs []struct{ ID string }
	_ = json.Unmarshal(body, &evs)
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	status := http.StatusOK
	if g.answer != nil {
		status = g.answer(int(n), ids)
	}
	if status == 0 {
		g.mu.Lock()
		g.hung[r] = time.Now()
		g.mu.Unlock()
		<-r.Context().Done()
		g.mu.Lock()
		delete(g.hung, r)
		g.mu.Unlock()
		return
	}
	g.count(g.now.Add(1))
	defer g.now.Add(-1)
	select {
	case <-time.After(g.hold):
	case <-r.Context().Done():
		return
	}
	g.mu.Lock()
	for _, id := range ids {
		if status == http.StatusOK {
			g.ok[id]++
			g.okAt[id] = append(g.okAt[id], time.Now())
		} else {
			g.failAt[id] = append(g.failAt[id], time.Now())
		}
	}
	g.mu.Unlock()
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "3")
	}
	w.WriteHeader(status)
}

// count notes that cur requests are held now.
func (g *gauge) count(cur int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.peak, g.since = max(g.peak, cur), max(g.since, cur)
	for _, at := range g.hung {
		if time.Since(at) > 500*time.Millisecond {
			g.beside = max(g.beside, cur)
			break
		}
	}
}

// mark starts a new peak.
func (g *gauge) mark() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.since = g.now.Load()
}

func (g *gauge) peaks() (all, since int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak, g.since
}

func (g *gauge) delivered() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.ok)
}

// deliveryStatus returns a subscription's deliveryStatus.
func deliveryStatus(t *testing.T, base, topic, name string) (limit, inFlight int) {
	t.Helper()
	var sub struct {
		Properties struct {
			DeliveryStatus struct{ ConcurrencyLimit, InFlight int } `json:"deliveryStatus"`
		} `json:"properties"`
	}
	body := mustDo(t, http.MethodGet, base+"/topics/"+topic+"/eventSubscriptions/"+name+"?"+apiVersion, "", nil, http.StatusOK)
	if err := json.Unmarshal(body, &sub); err != nil {
		t.Fatal(err)
	}
	return sub.Properties.DeliveryStatus.ConcurrencyLimit, sub.Properties.DeliveryStatus.InFlight
}

// TestConcurrency_FailingFractionKeepsItsRate: an endpoint that answers
// every third request with 500 keeps the subscription's full concurrency
// throughout: its failures are retried on the schedule, and its healthy
// share is served by as many requests at once as a healthy endpoint gets.
func TestConcurrency_FailingFractionKeepsItsRate(t *testing.T) {
	// Serial (see doc.go): measures how many requests are in flight at once.
	b := startBroker(t, fastEnv())
	g := newGauge(t, 50*time.Millisecond, func(n int, _ []string) int {
		if n%3 == 0 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(g.URL)})
	for i := range 10 {
		publish(t, b.URL, "t", egEvents(fmt.Sprint("e", i, "-"), 40))
	}
	// From the time it reaches the whole concurrency, the subscription
	// keeps it, failures or not.
	low := perSubscription
	reached := false
	eventually(t, 60*time.Second, func() error {
		if limit, _ := deliveryStatus(t, b.URL, "t", "s"); limit == perSubscription {
			reached = true
		} else if reached {
			low = min(low, limit)
		}
		if n := g.delivered(); n != 400 {
			return fmt.Errorf("%d of 400 delivered", n)
		}
		return nil
	})
	t.Logf("%d requests for 400 events, at most %d at once; concurrencyLimit at least %d once reached", g.n.Load(), g.peak, low)
	if !reached || low != perSubscription {
		t.Errorf("concurrencyLimit fell to %d (reached %d: %v) while a third of the requests failed with 500, want %d throughout",
			low, perSubscription, reached, perSubscription)
	}
	if g.peak < perSubscription {
		t.Errorf("at most %d requests at once, want %d", g.peak, perSubscription)
	}
}

// TestConcurrency_HangingFractionKeepsItsRate: an endpoint that never
// answers one request in fifty still gets the subscription's full
// concurrency for the others, while those hang.
func TestConcurrency_HangingFractionKeepsItsRate(t *testing.T) {
	// Serial (see doc.go): measures how many requests are in flight at once.
	b := startBroker(t, fastEnv("broker__deliverTimeoutInSeconds", "3"))
	g := newGauge(t, 50*time.Millisecond, func(n int, _ []string) int {
		if n%50 == 0 {
			return 0
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(g.URL)})
	for i := range 20 {
		publish(t, b.URL, "t", egEvents(fmt.Sprint("e", i, "-"), 40))
	}
	eventually(t, 60*time.Second, func() error {
		if n := g.delivered(); n != 800 {
			return fmt.Errorf("%d of 800 delivered", n)
		}
		return nil
	})
	g.mu.Lock()
	beside := g.beside
	g.mu.Unlock()
	t.Logf("%d requests for 800 events; at most %d answered ones at once beside a request hung for half a second", g.n.Load(), beside)
	// A request or two may be on its way, between the broker and the
	// endpoint; the hung requests held all but one when they counted.
	if beside < perSubscription*3/4 {
		t.Errorf("at most %d requests at once beside a hung one, want about %d: the hung requests held the subscription's slots", beside, perSubscription)
	}
}

// TestConcurrency_BusyAndSlowEndpoints: an endpoint that answers 503 to
// everything is left with a few requests at once, while one that answers
// 200 slowly gets the subscription's full concurrency.
func TestConcurrency_BusyAndSlowEndpoints(t *testing.T) {
	// Serial (see doc.go): measures how many requests are in flight at once.
	b := startBroker(t, fastEnv())
	var busyNow atomic.Bool
	busy := newGauge(t, 50*time.Millisecond, func(int, []string) int {
		if busyNow.Load() {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	slow := newGauge(t, 600*time.Millisecond, nil)
	createTopic(t, b.URL, "busy", "EventGridSchema")
	createTopic(t, b.URL, "slow", "EventGridSchema")
	createSubscription(t, b.URL, "busy", "s", map[string]any{"destination": webhookDest(busy.URL)})
	createSubscription(t, b.URL, "slow", "s", map[string]any{"destination": webhookDest(slow.URL)})

	// The busy endpoint is healthy at first: its subscription reaches its
	// full concurrency, and so does the slow one's.
	publish(t, b.URL, "busy", egEvents("warm", 100))
	for i := range 4 {
		publish(t, b.URL, "slow", egEvents(fmt.Sprint("slow", i, "-"), 50))
	}
	eventually(t, 30*time.Second, func() error {
		if n := busy.delivered(); n != 100 {
			return fmt.Errorf("%d of 100 warm-up events delivered", n)
		}
		return nil
	})
	if limit, _ := deliveryStatus(t, b.URL, "busy", "s"); limit != perSubscription {
		t.Fatalf("concurrencyLimit %d after 100 successes, want %d", limit, perSubscription)
	}

	busyNow.Store(true)
	for i := range 4 {
		publish(t, b.URL, "busy", egEvents(fmt.Sprint("busy", i, "-"), 50))
	}
	eventually(t, 30*time.Second, func() error {
		if limit, _ := deliveryStatus(t, b.URL, "busy", "s"); limit > 2 {
			return fmt.Errorf("concurrencyLimit %d while the endpoint answers 503 to everything", limit)
		}
		return nil
	})
	busy.mark()
	eventually(t, 60*time.Second, func() error {
		if n := slow.delivered(); n != 200 {
			return fmt.Errorf("%d of 200 delivered to the slow endpoint", n)
		}
		return nil
	})
	_, busyPeak := busy.peaks()
	slowPeak, _ := slow.peaks()
	t.Logf("busy endpoint: at most %d requests at once once lowered; slow endpoint: at most %d", busyPeak, slowPeak)
	if busyPeak > 2 {
		t.Errorf("the endpoint answering 503 to everything got %d requests at once, want 2 at most", busyPeak)
	}
	if slowPeak < perSubscription {
		t.Errorf("the slow endpoint got at most %d requests at once, want %d", slowPeak, perSubscription)
	}
	if limit, _ := deliveryStatus(t, b.URL, "slow", "s"); limit != perSubscription {
		t.Errorf("slow endpoint's concurrencyLimit %d, want %d", limit, perSubscription)
	}
}

// TestConcurrency_RetryAfterDelaysTheEvent: under the cloud profile a 429
// with Retry-After delays that event's next attempt, while the
// subscription's other events go on.
func TestConcurrency_RetryAfterDelaysTheEvent(t *testing.T) {
	// Serial (see doc.go): nine events must be delivered within another's 3 s Retry-After.
	b := startBroker(t, cloudEnv())
	var refused atomic.Bool
	g := newGauge(t, 10*time.Millisecond, func(_ int, ids []string) int {
		if len(ids) == 1 && ids[0] == "x0" && refused.CompareAndSwap(false, true) {
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", cloudSub(g.URL))
	publish(t, b.URL, "t", egEvents("warm", 20))
	publish(t, b.URL, "t", egEvents("x", 10))
	eventually(t, 20*time.Second, func() error {
		if n := g.delivered(); n != 30 {
			return fmt.Errorf("%d of 30 delivered", n)
		}
		return nil
	})
	g.mu.Lock()
	defer g.mu.Unlock()
	refusedAt, retriedAt := g.failAt["x0"][0], g.okAt["x0"][0]
	if gap := retriedAt.Sub(refusedAt); gap < 3*time.Second {
		t.Errorf("x0 delivered %v after its 429 with Retry-After: 3", gap)
	}
	for i := 1; i < 10; i++ {
		if id := fmt.Sprint("x", i); !g.okAt[id][0].Before(retriedAt) {
			t.Errorf("%s delivered after x0's retry: the Retry-After held up the subscription", id)
		}
	}
}

// TestConcurrency_PublishHeldForRoom: publishers that outrun a live
// subscriber whose share is full are held until its deliveries make room,
// and accepted: back-pressure as waiting, not as 503s to retry.
func TestConcurrency_PublishHeldForRoom(t *testing.T) {
	// Serial (see doc.go): deliveries must make room within the 1 s a publish is held.
	b := startBroker(t, fastEnv("broker__maxQueuedEventsPerSubscription", "10"))
	g := newGauge(t, 20*time.Millisecond, nil)
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(g.URL)})
	// Warm: the subscriber has taken a delivery, and the broker has seen
	// it take it (its answer read, the request no longer in flight), so
	// that the share counts as draining. Before that a request that does
	// not fit is refused at once, as one behind a subscriber that never
	// took a delivery.
	publish(t, b.URL, "t", egEvents("warm", 1))
	eventually(t, 10*time.Second, func() error {
		if _, inFlight := deliveryStatus(t, b.URL, "t", "s"); g.delivered() != 1 || inFlight != 0 {
			return fmt.Errorf("not warm yet")
		}
		return nil
	})
	var wg sync.WaitGroup
	var refused atomic.Int64
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				code, _, body := do(t, nil, http.MethodPost, b.URL+"/topics/t/events?"+apiVersion, "application/json",
					egEvents(fmt.Sprint("p", w, "-", i, "-"), 5))
				switch code {
				case http.StatusOK:
				case http.StatusServiceUnavailable:
					refused.Add(1)
				default:
					t.Errorf("publish: %d %s", code, body)
				}
			}
		}()
	}
	wg.Wait()
	if n := refused.Load(); n != 0 {
		t.Errorf("%d of 60 publish requests refused with 503 while the subscriber was draining its share", n)
	}
	eventually(t, 30*time.Second, func() error {
		if n := g.delivered(); n != 301-int(refused.Load())*5 {
			return fmt.Errorf("%d delivered", n)
		}
		return nil
	})
}
