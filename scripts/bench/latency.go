package main

import (
	"fmt"
	"net/http"
	"time"
)

// scenarioF publishes single events at a fixed rate with unbatched delivery
// to one subscription and reports the latency from publish to receive.
func (s *settings) scenarioF() (r result, err error) {
	r = result{Scenario: "f", Title: fmt.Sprintf("latency at a fixed %.0f events/s, single-event publish, unbatched", s.rate),
		Subscriptions: 1, PublishBatch: 1, DeliveryBatch: 1}
	b, err := s.startBroker(&r, nil)
	if err != nil {
		return r, err
	}
	defer stopBroker(&r, b)
	sk, err := newSink(1, -1)
	if err != nil {
		return r, err
	}
	defer sk.close()
	mgmt := &http.Client{Timeout: 10 * time.Second}
	if err := b.createTopic(mgmt, topic); err != nil {
		return r, err
	}
	if err := b.subscribe(mgmt, topic, "s0", sk.endpoint(0), 0); err != nil {
		return r, err
	}
	pub := newPublisher(b.url, topic, s.size, s.rateWorkers)
	defer pub.close()

	// Warm up: open the connections both ways at the same rate, then start
	// counting afresh.
	warm := pub.fixedRate(s.rate, time.Second, s.rateWorkers, time.Now())
	sk.wait([]int{0}, warm.Accepted, s.drain)
	sk.reset()

	m, err := startMeter(b, "f", s.perfDir)
	if err != nil {
		return r, err
	}
	t0 := time.Now().Add(5 * time.Millisecond)
	r.Publish = pub.fixedRate(s.rate, s.duration, s.rateWorkers, t0)
	r.Expected = r.Publish.Accepted
	if !sk.wait([]int{0}, r.Expected, s.drain) {
		r.note("deliveries stopped short of the events published (nothing arrived for %v)", s.drain)
	}
	rec := sk.total([]int{0}, true)
	if err := m.finish(&r, rec.events); err != nil {
		return r, err
	}
	r.Received = rec.events
	if rec.last > 0 {
		r.Seconds = float64(rec.last-t0.UnixNano()) / 1e9
		r.EventsPerSecond = float64(rec.events) / r.Seconds
	}
	r.Latency = summarize(rec.lat)
	if r.Publish.Late > 0 {
		r.note("%d of %d requests were sent more than 1 ms behind schedule (at most %v)",
			r.Publish.Late, r.Publish.Requests, r.Publish.MaxLate.Round(10*time.Microsecond))
	}
	if r.Publish.Errors+r.Publish.OtherStatus+r.Publish.Rejected > 0 {
		r.note("%d publish requests failed or were refused: %s", r.Publish.Errors+r.Publish.OtherStatus+r.Publish.Rejected, r.Publish.FirstError)
	}
	r.judge("p99 < 5 ms", r.Latency.Samples > 0 && r.Latency.P99 < 5)
	return r, nil
}
