package metrics_test

import (
	"slices"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

func queueSub(uid uint64, topic, name string) *eventgrid.EventSubscription {
	s := newSub(uid, topic, name)
	s.Queue = &eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: time.Hour}
	return s
}

// pushOnly are the series a push subscription has and a queue
// subscription has not, and queueOnly the other way round.
var (
	pushOnly = []string{"eventgrid_subscription_delivery_success_latency_ms", "eventgrid_subscription_delivery_failure_latency_ms",
		"eventgrid_subscription_system_delay_for_first_attempt_ms"}
	queueOnly = []string{"eventgrid_queue_settled_total", "eventgrid_queue_lock_expired_total"}
	shared    = []string{"eventgrid_subscription_delivery_success_total", "eventgrid_subscription_delivery_failure_total",
		"eventgrid_subscription_delivery_attempts_total", "eventgrid_subscription_expired_total", "eventgrid_events_dropped_total"}
)

// families reports which of names a scrape has series of for the
// subscription name.
func families(s scrape, sub string, names []string) (has, lacks []string) {
	got := s.seriesWith("subscription", sub)
	for _, n := range names {
		if slices.Contains(got, n) {
			has = append(has, n)
		} else {
			lacks = append(lacks, n)
		}
	}
	return has, lacks
}

// TestPrometheus_QueueSubscriptionSeries: a queue subscription has the
// series both delivery modes share, at zero from its creation, and those
// of its own mode, not the push-only ones; it keeps its dead-letter series;
// a change of mode swaps the mode's series. (Deliveries refused at publish,
// push and queue alike, are counted once, by the dispatcher.)
func TestPrometheus_QueueSubscriptionSeries(t *testing.T) {
	p := metrics.NewPrometheus()
	q := queueSub(1, "t", "q")
	p.SubscriptionPut(q)
	p.SubscriptionPut(newSub(2, "t", "push"))
	p.DeadLetterWritten(q, 2)

	expect := func(sub string, want, notWant []string) {
		t.Helper()
		s := MustScrape(t, p.Handler())
		if _, lacks := families(s, sub, want); len(lacks) != 0 {
			t.Errorf("%s lacks %v", sub, lacks)
		}
		if has, _ := families(s, sub, notWant); len(has) != 0 {
			t.Errorf("%s has %v", sub, has)
		}
	}
	expect("q", append(slices.Clone(shared), queueOnly...), pushOnly)
	expect("push", append(slices.Clone(shared), pushOnly...), queueOnly)
	if v, ok := MustScrape(t, p.Handler()).value("eventgrid_dead_letter_written_total", "topic", "t", "subscription", "q"); !ok || v != 2 {
		t.Errorf("dead letters written for the queue subscription: %v, %v; want 2", v, ok)
	}

	p.SubscriptionPut(newSub(1, "t", "q")) // now delivers by push
	expect("q", append(slices.Clone(shared), pushOnly...), queueOnly)
	p.SubscriptionPut(q) // and back
	expect("q", append(slices.Clone(shared), queueOnly...), pushOnly)
}

// TestPrometheus_QueueRecords: a queue subscription's records move the
// series both modes share as a push subscription's do, and its own.
func TestPrometheus_QueueRecords(t *testing.T) {
	p := metrics.NewPrometheus()
	q := queueSub(1, "t", "q")
	p.SubscriptionPut(q)
	p.Record(outcome.Record{Kind: outcome.Started, Sub: q, Events: 3})
	p.Record(outcome.Record{Kind: outcome.Attempted, Sub: q, Events: 1, Latency: -1})
	p.Record(outcome.Record{Kind: outcome.Attempted, Sub: q, Events: 2, Failed: 2, Expired: 2, Latency: -1})
	p.Record(outcome.Record{Kind: outcome.Settled, Sub: q, Events: 1, Settlement: "acknowledge"})
	drop(p, q, outcome.Rejected, 1)
	drop(p, q, outcome.MaxDeliveryCountExceeded, 1)
	deadLetter(p, q, outcome.TimeToLiveExceeded)
	sub := func(more ...string) []string { return append([]string{"topic", "t", "subscription", "q"}, more...) }
	assertSeries(t, MustScrape(t, p.Handler()), []series{
		{"eventgrid_subscription_delivery_attempts_total", sub(), 3},
		{"eventgrid_subscription_delivery_success_total", sub(), 1},
		{"eventgrid_subscription_delivery_failure_total", sub(), 2},
		{"eventgrid_queue_lock_expired_total", sub(), 2},
		{"eventgrid_queue_settled_total", sub("kind", "acknowledge"), 1},
		{"eventgrid_queue_settled_total", sub("kind", "renewLock"), 0},
		{"eventgrid_events_dropped_total", sub("reason", "Rejected"), 1},
		{"eventgrid_events_dropped_total", sub("reason", "MaxDeliveryCountExceeded"), 1},
		{"eventgrid_events_dropped_total", sub("reason", "SubscriptionDeleted"), 0},
		{"eventgrid_subscription_expired_total", sub(), 1},
		{"eventgrid_subscription_dead_lettered_total", sub("reason", "TimeToLiveExceeded"), 1},
	})
}
