package main

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"
)

const mb = 1 << 20

// overflowRounds is how many parts the publishing past the limit is cut
// into, to watch the broker's memory level off. After each one the broker
// is asked for a garbage collection, through its profiling endpoints, so
// that its live heap tells what it keeps: the refusals' garbage is a few
// KB each, and the collector, paced by a heap of the whole backlog, would
// otherwise not run during the rounds at all, leaving the RSS to climb by
// the garbage whatever the broker keeps.
const overflowRounds = 6

// scenarioE queues s.backlog events for a dead subscriber (connection
// refused, back-off of an hour so nothing is retried during the run), with
// broker__maxQueuedEvents set to the same number, then keeps publishing past
// that limit.
func (s *settings) scenarioE() (r result, err error) {
	r = result{Scenario: "e", Title: "backlog for a dead subscriber, then publishing past the limit",
		Subscriptions: 1, PublishBatch: 100, DeliveryBatch: 50}
	// A port that was just free: nothing listens there, so connecting is
	// refused at once.
	deadAddr, err := freeAddr()
	if err != nil {
		return r, err
	}
	dead := "http://" + deadAddr + "/dead"
	pprofAddr, err := freeAddr()
	if err != nil {
		return r, err
	}

	backlog := amount(int64(s.backlog), 100)
	b, err := s.startBroker(&r, map[string]string{
		"broker__maxQueuedEvents":  fmt.Sprint(backlog),
		"broker__backoffIntervals": "1h,1h",
		// The whole backlog belongs to one subscription.
		"broker__maxQueuedEventsPerSubscription": fmt.Sprint(backlog),
		"broker__maxQueuedBytesPerSubscription":  "268435456",
		"debug__pprofAddress":                    pprofAddr,
	})
	if err != nil {
		return r, err
	}
	defer stopBroker(&r, b)
	mgmt := &http.Client{Timeout: 10 * time.Second}
	if err := b.createTopic(mgmt, topic); err != nil {
		return r, err
	}
	if err := b.subscribe(mgmt, topic, "dead", dead, 50); err != nil {
		return r, err
	}
	pub := newPublisher(b.url, topic, s.size, s.publishers)
	defer pub.close()

	time.Sleep(time.Second)
	idle, err := procMem(b.pid)
	if err != nil {
		return r, err
	}
	if err := b.collect(pprofAddr); err != nil {
		return r, err
	}
	idleLive := b.liveHeap.Load()

	// The backlog. The CPU figures are for this phase.
	m, err := startMeter(b, "e", s.perfDir)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	var seq atomic.Int64
	r.Publish = pub.run(closedLoop{publishers: s.publishers, batch: 100, total: backlog}, &seq)
	publishSeconds := time.Since(t0).Seconds()
	after := settle(b.pid) // the first attempts fail at once; let the memory settle
	if err := m.finish(&r, r.Publish.Accepted); err != nil {
		return r, err
	}
	n := r.Publish.Accepted
	if n != backlog {
		r.note("only %d of %d backlog events were accepted (%d refused with 503, %d failed: %s)",
			n, backlog, r.Publish.Rejected, r.Publish.Errors+r.Publish.OtherStatus, r.Publish.FirstError)
	}

	// Past the limit, in rounds, watching the memory.
	over := amount(int64(s.overflow), overflowRounds) / overflowRounds
	var (
		overflow publishStats
		rss      [overflowRounds]int64
		live     [overflowRounds]int64
	)
	var refusing int64 // the broker's CPU ticks in the rounds, without the collections asked for
	for i := range overflowRounds {
		cpu0, _ := procCPU(b.pid)
		overflow.add(pub.run(closedLoop{publishers: s.publishers, batch: 100, total: seq.Load() + over*100}, &seq))
		cpu1, _ := procCPU(b.pid)
		refusing += cpu1 - cpu0
		mem, err := procMem(b.pid)
		if err != nil {
			return r, fmt.Errorf("the broker died while refusing publish requests: %w\n%s", err, b.output())
		}
		rss[i] = mem.RSS
		if err := b.collect(pprofAddr); err != nil {
			return r, err
		}
		live[i] = b.liveHeap.Load()
	}
	healthy := b.healthy(mgmt)
	final, err := procMem(b.pid)
	if err != nil {
		return r, err
	}
	r.RSS, r.PeakRSS = final.RSS, final.Peak

	perEvent := float64(after.RSS-idle.RSS) / float64(max(n, 1))
	overhead := perEvent - float64(s.size)
	// The heap left live by the collections while refusing holds the whole
	// backlog and little else: the requests in flight.
	livePerEvent := float64(live[0]-idleLive) / float64(max(n, 1))
	refusedAll := overflow.Requests > 0 && overflow.Rejected == overflow.Requests && overflow.MissingRetryAfter == 0
	last, before := live[overflowRounds-1], live[overflowRounds/2-1]
	levelled := float64(last-before) <= 0.05*float64(before)
	bounded := healthy && b.alive() && refusedAll && levelled

	r.detail("queued_events", n)
	r.detail("publish_events_per_second", float64(n)/publishSeconds)
	r.detail("idle_rss_bytes", idle.RSS)
	r.detail("rss_after_backlog_bytes", after.RSS)
	r.detail("rss_per_queued_event_bytes", perEvent)
	r.detail("overhead_per_queued_event_bytes", overhead)
	r.detail("idle_live_heap_bytes", idleLive)
	r.detail("live_heap_per_queued_event_bytes", livePerEvent)
	r.detail("overflow_publish", overflow)
	r.detail("overflow_broker_cpu_seconds_per_refused_request", float64(refusing)/clockTicks/float64(max(overflow.Requests, 1)))
	r.detail("overflow_rss_after_each_round_bytes", rss)
	r.detail("overflow_live_heap_after_each_round_bytes", live)
	r.detail("healthy_after_overflow", healthy)

	r.note("idle RSS %.1f MB; after %d queued events %.1f MB: %.0f B per event, %.0f B beyond its %d B payload",
		float64(idle.RSS)/mb, n, float64(after.RSS)/mb, perEvent, overhead, s.size)
	r.note("live heap (gctrace) %.0f B per queued event, %.0f B beyond the payload; the rest of the RSS is garbage not yet collected (GOGC)",
		livePerEvent, livePerEvent-float64(s.size))
	r.note("past the limit: %d of %d publish requests got 503, %d without Retry-After (Retry-After: %q); broker CPU %.2f ms per refused request",
		overflow.Rejected, overflow.Requests, overflow.MissingRetryAfter, overflow.RetryAfter,
		1000*float64(refusing)/clockTicks/float64(max(overflow.Requests, 1)))
	r.note("live heap after a collection after each of %d rounds of %d refused requests: %s MB; levelled off: %v; broker healthy: %v",
		overflowRounds, over, mbList(live[:]), levelled, healthy)
	r.note("RSS after each round, before its collection: %s MB (peak %.1f MB)", mbList(rss[:]), float64(final.Peak)/mb)
	r.judge("< 300 B overhead per queued event, idle RSS < 20 MB, bounded at the limit",
		overhead < 300 && idle.RSS < 20*mb && bounded && n == backlog)
	return r, nil
}

func mbList(v []int64) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.0f", float64(x)/mb)
	}
	return s
}

// settle waits until the RSS of pid changes by under 1% over half a second
// (at most 15 s) and returns the last reading.
func settle(pid int) memInfo {
	prev, _ := procMem(pid)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		cur, err := procMem(pid)
		if err != nil {
			return prev
		}
		d := cur.RSS - prev.RSS
		prev = cur
		if d < 0 {
			d = -d
		}
		if float64(d) < 0.01*float64(cur.RSS) {
			return cur
		}
	}
	return prev
}
