package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// failFirst answers 503 to every delivery while fail is set, and passes
// them to h once it is not.
type failFirst struct {
	h    http.Handler
	fail atomic.Bool
}

func (f *failFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.fail.Load() {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	f.h.ServeHTTP(w, r)
}

// scenarioM compares redriving with publishing, on one broker and one
// subscription (batches of 50, one attempt allowed): -redrive-events
// events are published while the subscriber answers 503, and given up on;
// then, the subscriber fixed, one :redrive of {} puts them all back (m),
// and the same number is published afresh (mp). Each phase is measured
// from its first request to the last event the sink receives: the target
// is that a redrive costs the broker no more CPU per event than publishing
// (docs/delivery.md#redrive).
func (s *settings) scenarioM() []result {
	n := amount(s.redriveEvents, 100)
	m := result{Scenario: "m", Title: fmt.Sprintf("redrive of %d given-up events (one :redrive), delivered in batches of 50", n),
		Subscriptions: 1, PublishBatch: int(n), DeliveryBatch: 50}
	mp := result{Scenario: "mp", Title: fmt.Sprintf("the same %d events published afresh (100-event requests), on the same broker", n),
		Subscriptions: 1, PublishBatch: 100, DeliveryBatch: 50}
	if err := s.runRedrive(&m, &mp, n); err != nil {
		fmt.Fprintf(os.Stderr, "scenario m: %v\n", err)
		if m.Error == "" {
			m.Error = err.Error()
		}
		if mp.Error == "" {
			mp.Error = err.Error()
		}
	}
	return []result{m, mp}
}

// runRedrive runs m's phases, filling m and mp.
func (s *settings) runRedrive(m, mp *result, n int64) error {
	b, err := s.startBroker(m, map[string]string{
		"broker__maxQueuedEvents":                fmt.Sprint(2 * n),
		"broker__maxQueuedEventsPerSubscription": fmt.Sprint(n),
		"broker__maxQueuedBytesPerSubscription":  "268435456",
		"broker__maxFailuresPerSubscription":     fmt.Sprint(n),
		"broker__maxFailureBytesPerSubscription": "268435456",
		"broker__logEventExpiry":                 "false",
	})
	if err != nil {
		return err
	}
	defer stopBroker(m, b)
	mp.BrokerEnv = m.BrokerEnv
	sk := newRecorder(1, -1)
	gate := &failFirst{h: sk}
	gate.fail.Store(true)
	if sk.srv, sk.ln, err = serveLoopback(gate); err != nil {
		return err
	}
	defer sk.close()
	mgmt := &http.Client{Timeout: 5 * time.Minute}
	if err := b.createTopic(mgmt, topic); err != nil {
		return err
	}
	sub := fmt.Sprintf(`{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":%q,"maxEventsPerBatch":50}},"retryPolicy":{"maxDeliveryAttempts":1}}}`, sk.endpoint(0))
	if err := b.put(mgmt, "/topics/"+topic+"/eventSubscriptions/s0", sub); err != nil {
		return err
	}
	pub := newPublisher(b.url, topic, s.size, s.publishers)
	defer pub.close()

	// Given up on: every event published while the subscriber fails.
	var seq atomic.Int64
	given := pub.run(closedLoop{publishers: s.publishers, batch: 100, total: n, deadline: time.Now().Add(time.Hour), retry503: true, giveUp: s.drain}, &seq)
	subURL := b.url + "/topics/" + topic + "/eventSubscriptions/s0" + apiVersion
	if !waitCount(n, s.drain, func() int64 { return dropped(mgmt, subURL) }) {
		return fmt.Errorf("%d of %d published events given up on (%d accepted)", dropped(mgmt, subURL), n, given.Accepted)
	}
	gate.fail.Store(false)

	if err := s.redrivePhase(m, b, sk, mgmt, n); err != nil {
		return err
	}
	sk.reset()
	return s.publishPhase(mp, b, sk, pub, n)
}

// redrivePhase measures one :redrive of every event given up on, until
// the sink has them all.
func (s *settings) redrivePhase(r *result, b *broker, sk *sink, mgmt *http.Client, n int64) error {
	meter, err := startMeter(b, "m", s.perfDir)
	if err != nil {
		return err
	}
	t0 := time.Now()
	body, err := post(mgmt, b.url+"/topics/"+topic+"/eventSubscriptions/s0:redrive"+apiVersion, []byte(`{}`), nil)
	if err != nil {
		return err
	}
	took := time.Since(t0)
	var a struct {
		Moved    int64             `json:"moved"`
		NotMoved []json.RawMessage `json:"notMoved"`
	}
	if err := json.Unmarshal(body, &a); err != nil || a.Moved != n {
		return fmt.Errorf("redrive answered %.200s (%v), want %d moved", body, err, n)
	}
	r.Expected = n
	if !sk.wait([]int{0}, n, s.drain) {
		r.note("deliveries stopped short of the events redriven (nothing arrived for %v)", s.drain)
	}
	rec := sk.total([]int{0}, false)
	if err := r.finish(meter, b, t0, rec.events, rec.last, nil); err != nil {
		return err
	}
	r.detail("redrive_request_seconds", took.Seconds())
	r.note("the :redrive request took %.3f s; latencies are not shown: the events carry their first publish time", took.Seconds())
	return nil
}

// publishPhase measures publishing n events afresh, until the sink has
// them all.
func (s *settings) publishPhase(r *result, b *broker, sk *sink, pub *publisher, n int64) error {
	meter, err := startMeter(b, "mp", s.perfDir)
	if err != nil {
		return err
	}
	t0 := time.Now()
	var seq atomic.Int64
	r.Publish = pub.run(closedLoop{publishers: s.publishers, batch: 100, total: n, deadline: t0.Add(time.Hour), retry503: true, giveUp: s.drain}, &seq)
	r.Expected = r.Publish.Accepted
	if !sk.wait([]int{0}, r.Expected, s.drain) {
		r.note("deliveries stopped short of the events published (nothing arrived for %v)", s.drain)
	}
	rec := sk.total([]int{0}, true)
	return r.finish(meter, b, t0, rec.events, rec.last, rec.lat)
}

// dropped returns the events the subscription at url gave up on, or -1.
func dropped(c *http.Client, url string) int64 {
	var sub struct {
		Properties struct {
			DeliveryStatus struct {
				Dropped int64 `json:"dropped"`
			} `json:"deliveryStatus"`
		} `json:"properties"`
	}
	if err := getJSON(c, url, &sub); err != nil {
		return -1
	}
	return sub.Properties.DeliveryStatus.Dropped
}
