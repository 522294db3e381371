package tests_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/eventgrid/aznamespaces"

	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
)

// timeScale shortens lock durations, release delays and times to live in
// most tests below: a 60 s lock lasts 1.2 s.
const timeScale = "0.02"

// TestPull_MaxDeliveryCount: an event whose lock expires maxDeliveryCount
// times is dropped, and counted.
func TestPull_MaxDeliveryCount(t *testing.T) {
	t.Parallel() // mostly a receive's 10 s wait for nothing (see doc.go)
	p := startPullBroker(t, "broker__queueTimeScale", timeScale)
	p.mustMgmt(t, http.MethodPut, "/topics/t", map[string]any{"properties": map[string]any{"inputSchema": "CloudEventSchemaV1_0"}})
	p.mustMgmt(t, http.MethodPut, "/topics/t/eventSubscriptions/q", map[string]any{"properties": queueProps(map[string]any{"maxDeliveryCount": 2})})
	if _, err := p.sender(t, "t").SendEvent(t.Context(), cloudEvents(t, "e", 1)[0], nil); err != nil {
		t.Fatal(err)
	}
	r := p.receiver(t, "t", "q")
	first := receive(t, r, 1, 10)
	second := receive(t, r, 1, 10) // after the first lock expired
	if len(first) != 1 || len(second) != 1 || *second[0].BrokerProperties.DeliveryCount != 2 {
		t.Fatalf("received %v then %v; want the event twice", ids(first), ids(second))
	}
	if res, err := r.AcknowledgeEvents(t.Context(), lockTokens(first), nil); err != nil || len(res.FailedLockTokens) != 1 || *res.FailedLockTokens[0].Error.Code != "TokenLost" {
		t.Fatalf("acknowledging an expired lock: %+v, %v; want TokenLost and no error", res.AcknowledgeEventsResult, err)
	}
	eventually(t, 20*time.Second, func() error {
		if n := p.metric(t, `eventgrid_events_dropped_total{reason="MaxDeliveryCountExceeded",subscription="q",topic="t"}`); n != 1 {
			return fmt.Errorf("dropped %v, want 1", n)
		}
		return nil
	})
	if got := receive(t, r, 1, 10); len(got) != 0 {
		t.Fatalf("received %v after the last delivery", ids(got))
	}
	if n := p.metric(t, `eventgrid_queue_lock_expired_total{subscription="q",topic="t"}`); n != 2 {
		t.Fatalf("lock expiries %v, want 2", n)
	}
}

// TestPull_LockExpiryRealTime: with the shortest lock Azure allows, 60 s,
// unscaled, an unsettled event comes back once its lock expires.
func TestPull_LockExpiryRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a 60 s lock")
	}
	t.Parallel() // a minute of waiting, with little CPU (see doc.go)
	p := startPullBroker(t)
	p.mustMgmt(t, http.MethodPut, "/topics/t", map[string]any{"properties": map[string]any{"inputSchema": "CloudEventSchemaV1_0"}})
	p.mustMgmt(t, http.MethodPut, "/topics/t/eventSubscriptions/q", map[string]any{"properties": queueProps(map[string]any{"receiveLockDurationInSeconds": 60})})
	if _, err := p.sender(t, "t").SendEvent(t.Context(), cloudEvents(t, "e", 1)[0], nil); err != nil {
		t.Fatal(err)
	}
	r := p.receiver(t, "t", "q")
	first := receive(t, r, 1, 10)
	start := time.Now()
	second := receive(t, r, 1, 90)
	waited := time.Since(start)
	t.Logf("redelivered after %v", waited)
	if len(second) != 1 || *second[0].BrokerProperties.DeliveryCount != 2 || waited < 59*time.Second {
		t.Fatalf("received %v after %v; want the event again once its 60 s lock expired", ids(second), waited)
	}
	if res, err := r.ReleaseEvents(t.Context(), lockTokens(first), nil); err != nil || len(res.FailedLockTokens) != 1 || *res.FailedLockTokens[0].Error.Code != "TokenLost" {
		t.Fatalf("releasing the expired lock: %+v, %v; want TokenLost and no error", res.ReleaseEventsResult, err)
	}
	if res, err := r.AcknowledgeEvents(t.Context(), lockTokens(second), nil); err != nil || len(res.SucceededLockTokens) != 1 {
		t.Fatalf("acknowledge: %+v %v", res, err)
	}
}

// TestPull_Conservation: receivers acknowledge, release, reject and let
// locks expire at random, concurrently; every event ends in exactly one
// final state (acknowledged, or dropped as rejected or past its delivery
// count), and none is acknowledged twice.
func TestPull_Conservation(t *testing.T) {
	t.Parallel()
	const (
		events    = 1000
		receivers = 4
	)
	p := startPullBroker(t, "broker__queueTimeScale", timeScale)
	p.mustMgmt(t, http.MethodPut, "/topics/t", map[string]any{"properties": map[string]any{"inputSchema": "CloudEventSchemaV1_0"}})
	p.mustMgmt(t, http.MethodPut, "/topics/t/eventSubscriptions/q", map[string]any{"properties": queueProps(map[string]any{"maxDeliveryCount": 3})})
	sender := p.sender(t, "t")
	for i := 0; i < events; i += 100 {
		if _, err := sender.SendEvents(t.Context(), cloudEvents(t, fmt.Sprint("b", i, "-"), 100), nil); err != nil {
			t.Fatal(err)
		}
	}

	var (
		mu    sync.Mutex
		acked = map[string]int{} // event id -> successful acknowledgements
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range receivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			r := p.receiver(t, "t", "q")
			for ctx.Err() == nil {
				resp, err := r.ReceiveEvents(ctx, &aznamespaces.ReceiveEventsOptions{MaxEvents: to.Ptr[int32](20), MaxWaitTime: to.Ptr[int32](10)})
				if err != nil {
					continue
				}
				byToken := map[string]string{}
				var ack, rel, relDelay, rej []string
				for _, d := range resp.Details {
					tok := *d.BrokerProperties.LockToken
					byToken[tok] = d.Event.ID
					switch x := rng.IntN(100); {
					case x < 40:
						ack = append(ack, tok)
					case x < 55:
						rel = append(rel, tok)
					case x < 62:
						relDelay = append(relDelay, tok)
					case x < 72:
						rej = append(rej, tok)
					} // the rest: the lock expires
				}
				if rng.IntN(10) == 0 && len(ack) > 0 {
					ack = append(ack, ack[0]) // the same token twice
				}
				if len(ack) > 0 {
					if res, err := r.AcknowledgeEvents(ctx, ack, nil); err == nil {
						mu.Lock()
						for _, tok := range res.SucceededLockTokens {
							acked[byToken[tok]]++
						}
						mu.Unlock()
					}
				}
				if len(rel) > 0 {
					r.ReleaseEvents(ctx, rel, nil)
				}
				if len(relDelay) > 0 {
					r.ReleaseEvents(ctx, relDelay, &aznamespaces.ReleaseEventsOptions{ReleaseDelayInSeconds: to.Ptr(aznamespaces.ReleaseDelayTenSeconds)})
				}
				if len(rej) > 0 {
					r.RejectEvents(ctx, rej, nil)
				}
			}
		}()
	}
	final := func() (ackedN, rejected, exhausted float64) {
		return p.metric(t, `eventgrid_queue_settled_total{kind="acknowledge",subscription="q",topic="t"}`),
			p.metric(t, `eventgrid_events_dropped_total{reason="Rejected",subscription="q",topic="t"}`),
			p.metric(t, `eventgrid_events_dropped_total{reason="MaxDeliveryCountExceeded",subscription="q",topic="t"}`)
	}
	start := time.Now()
	eventually(t, 120*time.Second, func() error {
		a, r, x := final()
		if a+r+x != events {
			return fmt.Errorf("acknowledged %v + rejected %v + past their delivery count %v = %v of %d", a, r, x, a+r+x, events)
		}
		return nil
	})
	cancel()
	wg.Wait()
	a, r, x := final()
	t.Logf("%d events in %v: acknowledged %v, rejected %v, dropped after 3 deliveries %v", events, time.Since(start), a, r, x)

	mu.Lock()
	defer mu.Unlock()
	for id, n := range acked {
		if n != 1 {
			t.Errorf("event %s acknowledged %d times", id, n)
		}
	}
	if float64(len(acked)) != a {
		t.Errorf("the receivers saw %d acknowledgements succeed, the broker counted %v", len(acked), a)
	}
	var sub struct {
		Properties struct {
			DeliveryStatus struct{ Available, Locked, Delayed int }
		}
	}
	if err := json.Unmarshal(p.mustMgmt(t, http.MethodGet, "/topics/t/eventSubscriptions/q", nil), &sub); err != nil {
		t.Fatal(err)
	}
	if ds := sub.Properties.DeliveryStatus; ds.Available+ds.Locked+ds.Delayed != 0 {
		t.Errorf("deliveryStatus %v; want the queue empty", ds)
	}
	if n := p.metric(t, `eventgrid_queue_events{state="locked",subscription="q",topic="t"}`); n != 0 {
		t.Errorf("locked gauge %v", n)
	}
}

// TestPull_DeadLetter: rejected events, events past their delivery count
// and past their time to live land in the dead-letter container, in the
// layout push subscriptions use, with their reasons and how their last
// receive ended.
func TestPull_DeadLetter(t *testing.T) {
	t.Parallel()
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	// Locks and times to live of 6 s rather than timeScale's 1.2 s: time
	// enough to receive and settle under the load of other tests.
	p := startPullBroker(t, "broker__queueTimeScale", "0.1", "broker__deadLetterFlushIntervalInSeconds", "1")
	p.mustMgmt(t, http.MethodPut, "/topics/t", map[string]any{"properties": map[string]any{"inputSchema": "CloudEventSchemaV1_0"}})
	p.mustMgmt(t, http.MethodPut, "/topics/t/eventSubscriptions/q", map[string]any{"properties": queueProps(map[string]any{
		"maxDeliveryCount": 1, "eventTimeToLive": "PT1M", "deadLetterDestination": deadLetterDest(connStr)})})
	if _, err := p.sender(t, "t").SendEvents(t.Context(), cloudEvents(t, "e", 4), nil); err != nil {
		t.Fatal(err)
	}
	r := p.receiver(t, "t", "q")
	got := receive(t, r, 3, 10)
	if fmt.Sprint(ids(got)) != "[e0 e1 e2]" {
		t.Fatalf("received %v", ids(got))
	}
	if _, err := r.RejectEvents(t.Context(), lockTokens(got)[:1], nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReleaseEvents(t.Context(), lockTokens(got)[1:2], nil); err != nil {
		t.Fatal(err)
	}
	// e2's lock expires; e3 is never received and outlives its time to live.
	want := map[string]string{"e0": "Rejected", "e1": "MaxDeliveryCountExceeded", "e2": "MaxDeliveryCountExceeded", "e3": "TimeToLiveExceeded"}
	var letters map[string]map[string]any
	eventually(t, 30*time.Second, func() error {
		if letters = deadLetters(t, connStr); len(letters) != len(want) {
			return fmt.Errorf("%d of %d dead letters in storage", len(letters), len(want))
		}
		return nil
	})
	// How each event's last receive ended; never "None".
	outcome := map[string]string{"e0": "Rejected", "e1": "Released", "e2": "LockExpired", "e3": "NeverReceived"}
	for key, ev := range letters {
		id := fmt.Sprint(ev["id"])
		attempts := 1.0
		if id == "e3" {
			attempts = 0
		}
		if ev["deadletterreason"] != want[id] || ev["deliveryattempts"] != attempts || ev["source"] != "/devices/d1" {
			t.Errorf("dead letter %s: %v; want reason %s after %v deliveries", key, ev, want[id], attempts)
		}
		if ev["lastdeliveryoutcome"] != outcome[id] {
			t.Errorf("dead letter %s: lastdeliveryoutcome %v, want %s", key, ev["lastdeliveryoutcome"], outcome[id])
		}
		if _, ok := ev["lastdeliveryattempttime"]; ok != (attempts > 0) || ev["lasthttpstatuscode"] != nil {
			t.Errorf("dead letter %s: lastdeliveryattempttime %v, lasthttpstatuscode %v; want the time of the receive, when there was one, and no status",
				key, ev["lastdeliveryattempttime"], ev["lasthttpstatuscode"])
		}
	}
	if n := p.metric(t, `eventgrid_subscription_dead_lettered_total{reason="MaxDeliveryCountExceeded",subscription="q",topic="t"}`); n != 2 {
		t.Errorf("dead-lettered past their delivery count: %v, want 2", n)
	}
}
