package metrics_test

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
)

var (
	_ api.Metrics                    = (*metrics.Prometheus)(nil)
	_ outcome.Metrics                = (*metrics.Prometheus)(nil)
	_ eventgrid.SubscriptionObserver = (*metrics.Prometheus)(nil)
	_ api.Metrics                    = (*metrics.Console)(nil)
	_ outcome.Metrics                = (*metrics.Console)(nil)
	_ eventgrid.SubscriptionObserver = (*metrics.Console)(nil)
)

// attempt records an attempt of n events begun (with the first attempts'
// delays) and ended after latency, failed unless err is nil.
func attempt(p *metrics.Prometheus, sub *eventgrid.EventSubscription, n int, latency time.Duration, err error, firsts ...time.Duration) {
	p.Record(outcome.Record{Kind: outcome.Started, Sub: sub, Events: n, FirstDelays: firsts})
	r := outcome.Record{Kind: outcome.Attempted, Sub: sub, Events: n, Latency: latency, Err: err}
	if err != nil {
		r.Failed = n
	}
	p.Record(r)
}

// drop records n events of sub given up on and dropped for reason, or
// discarded with the subscription or the broker.
func drop(p *metrics.Prometheus, sub *eventgrid.EventSubscription, reason outcome.Reason, n int) {
	if reason == outcome.SubscriptionDeleted || reason == outcome.Shutdown {
		p.Record(outcome.Record{Kind: outcome.Discarded, Sub: sub, Reason: reason, Events: n})
		return
	}
	for range n {
		p.Record(outcome.Record{Kind: outcome.GaveUp, Sub: sub, Reason: reason})
	}
}

// deadLetter records an event of sub given up on for reason and
// dead-lettered.
func deadLetter(p *metrics.Prometheus, sub *eventgrid.EventSubscription, reason outcome.Reason) {
	p.Record(outcome.Record{Kind: outcome.GaveUp, Sub: sub, Reason: reason, DeadLettered: true})
}

var errFail = errors.New("destination failed")

// scenario drives p through its interfaces: two topics, two subscriptions
// of t1 and one of t2.
func scenario(p *metrics.Prometheus) (s1, s2, s3 *eventgrid.EventSubscription) {
	s1, s2, s3 = newSub(1, "T1", "s1"), newSub(2, "T1", "s2"), newSub(3, "t2", "s3")
	for _, s := range []*eventgrid.EventSubscription{s1, s2, s3} {
		p.SubscriptionPut(s)
	}
	p.Published("T1", http.StatusOK, 2*time.Millisecond, 3, 1)
	p.Published("T1", http.StatusOK, 4*time.Millisecond, 2, 0)
	p.Published("T1", http.StatusBadRequest, time.Millisecond, 0, 0)
	p.Published("T1", http.StatusRequestEntityTooLarge, time.Millisecond, 0, 0)
	p.Published("T1", http.StatusServiceUnavailable, time.Millisecond, 0, 0)
	p.Published("t2", http.StatusOK, 1500*time.Microsecond, 1, 1)

	attempt(p, s1, 2, 10*time.Millisecond, nil, 5*time.Millisecond, 7*time.Millisecond)
	attempt(p, s1, 1, 30*time.Millisecond, errFail)
	attempt(p, s1, 1, 20*time.Millisecond, nil)
	drop(p, s1, outcome.TimeToLiveExceeded, 1)
	drop(p, s1, outcome.MaxDeliveryAttemptsExceeded, 2)
	drop(p, s1, outcome.Shutdown, 3)
	attempt(p, s2, 5, time.Second, errFail)
	p.Rejected("broker_full")
	p.Rejected("broker_full")
	p.Rejected("too_large")
	return s1, s2, s3
}

func TestPrometheus_Series(t *testing.T) {
	p := metrics.NewPrometheus()
	scenario(p)
	p.Collect(func() push.Stats {
		return push.Stats{InFlight: 2, Queues: []push.QueueStats{
			{Subscription: newSub(1, "T1", "s1"), Ready: 1, Backoff: [2]int{2, 3}, InFlight: 1},
			{Subscription: newSub(2, "T1", "s2"), Ready: 0, Backoff: [2]int{1, 0}, InFlight: 1},
		}}
	})
	p.CollectHeld(func() dispatch.Holdings {
		return dispatch.Holdings{Events: 9, Bytes: 900, Waiting: 4, Subscriptions: []dispatch.Holding{
			{Subscription: newSub(1, "T1", "s1"), Events: 7, Bytes: 700},
			{Subscription: queueSub(3, "T1", "q"), Events: 2, Bytes: 300},
		}}
	})
	s := MustScrape(t, p.Handler())
	t1 := []string{"topic", "T1"}
	sub := func(topic, name string, more ...string) []string {
		return append([]string{"topic", topic, "subscription", name}, more...)
	}
	assertSeries(t, s, []series{
		{"eventgrid_topic_events_received_total", t1, 5},
		{"eventgrid_topic_unmatched_events_total", t1, 1},
		{"eventgrid_topic_success_requests_total", t1, 2},
		{"eventgrid_topic_user_error_requests_total", t1, 2},
		{"eventgrid_topic_system_error_requests_total", t1, 1},
		{"eventgrid_topic_success_request_latency_ms#count", t1, 2},
		{"eventgrid_topic_success_request_latency_ms#sum", t1, 6},
		{"eventgrid_topic_events_received_total", []string{"topic", "t2"}, 1},
		{"eventgrid_topic_success_request_latency_ms#sum", []string{"topic", "t2"}, 1.5},

		{"eventgrid_subscription_delivery_success_total", sub("T1", "s1"), 3},
		{"eventgrid_subscription_delivery_failure_total", sub("T1", "s1"), 1},
		{"eventgrid_subscription_delivery_attempts_total", sub("T1", "s1"), 4},
		{"eventgrid_subscription_expired_total", sub("T1", "s1"), 3},
		{"eventgrid_subscription_delivery_success_latency_ms#count", sub("T1", "s1"), 2},
		{"eventgrid_subscription_delivery_success_latency_ms#sum", sub("T1", "s1"), 30},
		{"eventgrid_subscription_delivery_failure_latency_ms#count", sub("T1", "s1"), 1},
		{"eventgrid_subscription_delivery_failure_latency_ms#sum", sub("T1", "s1"), 30},
		{"eventgrid_subscription_system_delay_for_first_attempt_ms#count", sub("T1", "s1"), 2},
		{"eventgrid_subscription_system_delay_for_first_attempt_ms#sum", sub("T1", "s1"), 12},
		{"eventgrid_events_dropped_total", sub("T1", "s1", "reason", "TimeToLiveExceeded"), 1},
		{"eventgrid_events_dropped_total", sub("T1", "s1", "reason", "MaxDeliveryAttemptsExceeded"), 2},
		{"eventgrid_events_dropped_total", sub("T1", "s1", "reason", "Shutdown"), 3},
		{"eventgrid_events_dropped_total", sub("T1", "s1", "reason", "SubscriptionDeleted"), 0},
		{"eventgrid_subscription_delivery_failure_total", sub("T1", "s2"), 5},
		{"eventgrid_subscription_delivery_attempts_total", sub("T1", "s2"), 5},
		{"eventgrid_subscription_delivery_failure_latency_ms#sum", sub("T1", "s2"), 1000},
		{"eventgrid_subscription_expired_total", sub("T1", "s2"), 0},
		// A subscription without activity has its series at zero.
		{"eventgrid_subscription_delivery_success_total", sub("t2", "s3"), 0},
		{"eventgrid_publish_rejected_total", []string{"reason", "broker_full"}, 2},
		{"eventgrid_publish_rejected_total", []string{"reason", "too_large"}, 1},
		{"eventgrid_publish_rejected_total", []string{"reason", "subscription_full"}, 0},

		{"eventgrid_push_events", sub("T1", "s1", "state", "ready"), 1},
		{"eventgrid_push_events", sub("T1", "s1", "state", "backoff_1"), 2},
		{"eventgrid_push_events", sub("T1", "s1", "state", "backoff_2"), 3},
		{"eventgrid_push_events", sub("T1", "s2", "state", "backoff_1"), 1},
		{"eventgrid_backoff_queue_depth", []string{"queue", "backoff_1"}, 3},
		{"eventgrid_backoff_queue_depth", []string{"queue", "backoff_2"}, 3},
		{"eventgrid_deliveries_in_flight", nil, 2},
		{"eventgrid_queued_events", nil, 9},
		{"eventgrid_queued_bytes", nil, 900},
		{"eventgrid_publish_requests_waiting", nil, 4},
		{"eventgrid_subscription_held_events", sub("T1", "s1"), 7},
		{"eventgrid_subscription_held_bytes", sub("T1", "s1"), 700},
		{"eventgrid_subscription_held_events", sub("T1", "q"), 2},
		{"eventgrid_subscription_held_bytes", sub("T1", "q"), 300},
	})
	t.Run("latency buckets in milliseconds", func(t *testing.T) {
		m, _ := s.find("eventgrid_topic_success_request_latency_ms", t1...)
		var bounds []float64
		for _, b := range m.GetHistogram().GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
			if b.GetUpperBound() == 2.5 && b.GetCumulativeCount() != 1 {
				t.Errorf("bucket le=2.5 holds %d, want 1", b.GetCumulativeCount())
			}
		}
		if len(bounds) < 3 || bounds[0] != 0.25 || bounds[len(bounds)-2] != 5000 || !math.IsInf(bounds[len(bounds)-1], 1) {
			t.Errorf("buckets %v, want 0.25 … 5000, +Inf", bounds)
		}
	})
	t.Run("runtime collectors", func(t *testing.T) {
		if _, ok := s["go_goroutines"]; !ok {
			t.Errorf("go_goroutines missing")
		}
	})
}

func TestPrometheus_Forget(t *testing.T) {
	sub := func(topic, name string) []string { return []string{"topic", topic, "subscription", name} }
	tests := []struct {
		name string
		act  func(p *metrics.Prometheus, s1, s2, s3 *eventgrid.EventSubscription)
		// gone and kept list subscriptions (topic, name) and topics.
		goneSubs, keptSubs     [][2]string
		goneTopics, keptTopics []string
	}{
		{
			name:     "ForgetSubscription",
			act:      func(p *metrics.Prometheus, _, _, _ *eventgrid.EventSubscription) { p.ForgetSubscription("t1", "S1") },
			goneSubs: [][2]string{{"T1", "s1"}}, keptSubs: [][2]string{{"T1", "s2"}, {"t2", "s3"}},
			keptTopics: []string{"T1", "t2"},
		},
		{
			name:     "SubscriptionDeleted",
			act:      func(p *metrics.Prometheus, s1, _, _ *eventgrid.EventSubscription) { p.SubscriptionDeleted(s1) },
			goneSubs: [][2]string{{"T1", "s1"}}, keptSubs: [][2]string{{"T1", "s2"}, {"t2", "s3"}},
			keptTopics: []string{"T1", "t2"},
		},
		{
			name: "late measurements of a deleted subscription are ignored",
			act: func(p *metrics.Prometheus, s1, _, _ *eventgrid.EventSubscription) {
				p.SubscriptionDeleted(s1)
				attempt(p, s1, 1, time.Millisecond, errFail, time.Millisecond)
				drop(p, s1, outcome.SubscriptionDeleted, 4)
				drop(p, s1, outcome.Undeliverable("NotFound"), 1)
			},
			goneSubs: [][2]string{{"T1", "s1"}}, keptSubs: [][2]string{{"T1", "s2"}, {"t2", "s3"}},
			keptTopics: []string{"T1", "t2"},
		},
		{
			name: "late dead letters of a deleted subscription are ignored",
			act: func(p *metrics.Prometheus, s1, _, _ *eventgrid.EventSubscription) {
				deadLetter(p, s1, outcome.MaxDeliveryAttemptsExceeded)
				p.DeadLetterWritten(s1, 1)
				p.SubscriptionDeleted(s1)
				deadLetter(p, s1, outcome.MaxDeliveryAttemptsExceeded)
				p.DeadLetterWritten(s1, 3)
				p.DeadLetterWriteFailed(s1)
				p.DeadLetterDropped(s1, 2)
			},
			goneSubs: [][2]string{{"T1", "s1"}}, keptSubs: [][2]string{{"T1", "s2"}, {"t2", "s3"}},
			keptTopics: []string{"T1", "t2"},
		},
		{
			name:     "ForgetTopic",
			act:      func(p *metrics.Prometheus, _, _, _ *eventgrid.EventSubscription) { p.ForgetTopic("t1") },
			goneSubs: [][2]string{{"T1", "s1"}, {"T1", "s2"}}, keptSubs: [][2]string{{"t2", "s3"}},
			goneTopics: []string{"T1"}, keptTopics: []string{"t2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := metrics.NewPrometheus()
			s1, s2, s3 := scenario(p)
			tt.act(p, s1, s2, s3)
			s := MustScrape(t, p.Handler())
			for _, g := range tt.goneSubs {
				if got := s.seriesWith("subscription", g[1]); len(got) != 0 {
					t.Errorf("series of %s/%s remain: %v", g[0], g[1], got)
				}
			}
			for _, k := range tt.keptSubs {
				if _, ok := s.value("eventgrid_subscription_delivery_attempts_total", sub(k[0], k[1])...); !ok {
					t.Errorf("series of %s/%s are gone", k[0], k[1])
				}
			}
			for _, g := range tt.goneTopics {
				if got := s.seriesWith("topic", g); len(got) != 0 {
					t.Errorf("series of topic %s remain: %v", g, got)
				}
			}
			for _, k := range tt.keptTopics {
				if _, ok := s.value("eventgrid_topic_events_received_total", "topic", k); !ok {
					t.Errorf("series of topic %s are gone", k)
				}
			}
		})
	}
	t.Run("without an observer, series are created on first use", func(t *testing.T) {
		p := metrics.NewPrometheus()
		s1 := newSub(7, "t", "late")
		attempt(p, s1, 2, time.Millisecond, nil)
		s := MustScrape(t, p.Handler())
		if v, ok := s.value("eventgrid_subscription_delivery_success_total", sub("t", "late")...); !ok || v != 2 {
			t.Errorf("delivery_success = %v, %v; want 2", v, ok)
		}
		p.ForgetSubscription("t", "late")
		if got := MustScrape(t, p.Handler()).seriesWith("subscription", "late"); len(got) != 0 {
			t.Errorf("series remain after ForgetSubscription: %v", got)
		}
	})
}

func TestPrometheus_Collect(t *testing.T) {
	t.Run("stats are read at every scrape", func(t *testing.T) {
		p := metrics.NewPrometheus()
		var calls, held atomic.Int64
		p.Collect(func() push.Stats {
			n := calls.Add(1)
			return push.Stats{Queues: []push.QueueStats{
				{Subscription: newSub(1, "t", "s"), Ready: int(n)},
			}}
		})
		p.CollectHeld(func() dispatch.Holdings { return dispatch.Holdings{Events: held.Add(1)} })
		for want := 1.0; want <= 3; want++ {
			s := MustScrape(t, p.Handler())
			if v, _ := s.value("eventgrid_queued_events"); v != want {
				t.Errorf("scrape %v: queued_events = %v", want, v)
			}
			if v, _ := s.value("eventgrid_push_events", "topic", "t", "subscription", "s", "state", "ready"); v != want {
				t.Errorf("scrape %v: queue_depth = %v", want, v)
			}
		}
	})
	t.Run("queues of the same names are summed", func(t *testing.T) {
		p := metrics.NewPrometheus()
		p.Collect(func() push.Stats {
			return push.Stats{Queues: []push.QueueStats{
				{Subscription: newSub(1, "t", "s"), Ready: 1},
				{Subscription: newSub(2, "t", "s"), Ready: 2},
			}}
		})
		if v, _ := MustScrape(t, p.Handler()).value("eventgrid_push_events", "topic", "t", "subscription", "s", "state", "ready"); v != 3 {
			t.Errorf("queue_depth = %v, want 3", v)
		}
	})
	t.Run("no stats, no gauges", func(t *testing.T) {
		p := metrics.NewPrometheus()
		p.Collect(func() push.Stats {
			return push.Stats{Queues: []push.QueueStats{{Subscription: newSub(1, "t", "s")}}}
		})
		p.CollectHeld(func() dispatch.Holdings { return dispatch.Holdings{Events: 1} })
		p.Collect(nil)
		p.CollectHeld(nil)
		s := MustScrape(t, p.Handler())
		if _, ok := s["eventgrid_queued_events"]; ok {
			t.Errorf("eventgrid_queued_events present after CollectHeld(nil)")
		}
		if _, ok := s["eventgrid_push_events"]; ok {
			t.Errorf("eventgrid_push_events present after Collect(nil)")
		}
	})
}

// TestPrometheus_Concurrent measures, creates and deletes while scraping;
// run it with -race.
func TestPrometheus_Concurrent(t *testing.T) {
	p := metrics.NewPrometheus()
	p.Collect(func() push.Stats { return push.Stats{} })
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			topic := fmt.Sprintf("t%d", w%2)
			for i := range rounds {
				s := newSub(uint64(w*rounds+i+1), topic, fmt.Sprintf("s%d", i%5))
				p.SubscriptionPut(s)
				p.Published(topic, http.StatusOK, time.Millisecond, 1, 0)
				attempt(p, s, 1, time.Millisecond, nil, time.Millisecond)
				drop(p, s, outcome.TimeToLiveExceeded, 1)
				p.SubscriptionDeleted(s)
				if i%50 == 0 {
					p.ForgetTopic(topic)
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for scraping := true; scraping; {
		select {
		case <-done:
			scraping = false
		default:
			MustScrape(t, p.Handler())
		}
	}
	s := MustScrape(t, p.Handler())
	if got := slices.Concat(s.seriesWith("subscription", "s0"), s.seriesWith("subscription", "s4")); len(got) != 0 {
		t.Errorf("deleted subscriptions left series: %v", got)
	}
}
