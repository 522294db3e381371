package metrics_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/metrics"
)

func queueSub(uid uint64, topic, name string) *eventgrid.EventSubscription {
	s := newSub(uid, topic, name)
	s.Queue = &eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: time.Hour}
	return s
}

// pushFamilies are the families of push delivery in a scrape that carry
// the subscription label value name.
func pushFamilies(s scrape, name string) []string {
	return slices.DeleteFunc(s.seriesWith("subscription", name), func(f string) bool {
		return !strings.HasPrefix(f, "eventgrid_subscription_") && f != "eventgrid_events_dropped_total"
	})
}

// TestPrometheus_QueueSubscriptionSeries: a queue subscription gets no push
// delivery series (eventgrid_subscription_delivery_* and the others the
// push engine feeds), keeps its dead-letter series, and gets the push
// series once it becomes a push subscription. (Deliveries refused at
// publish, push and queue alike, are counted once, by the dispatcher.)
func TestPrometheus_QueueSubscriptionSeries(t *testing.T) {
	p := metrics.NewPrometheus()
	p.Pull() // the queue series registered beside the push ones
	q := queueSub(1, "t", "q")
	p.SubscriptionPut(q)
	p.SubscriptionPut(newSub(2, "t", "push"))
	p.DeadLetterWritten(q, 2)

	s := MustScrape(t, p.Handler())
	if got := pushFamilies(s, "q"); len(got) != 0 {
		t.Errorf("the queue subscription has push series %v", got)
	}
	if got := pushFamilies(s, "push"); len(got) == 0 {
		t.Errorf("the push subscription has no push series")
	}
	if v, ok := s.value("eventgrid_dead_letter_written_total", "topic", "t", "subscription", "q"); !ok || v != 2 {
		t.Errorf("dead letters written for the queue subscription: %v, %v; want 2", v, ok)
	}

	p.SubscriptionPut(newSub(1, "t", "q")) // now delivers by push
	if got := pushFamilies(MustScrape(t, p.Handler()), "q"); len(got) == 0 {
		t.Errorf("the subscription that became push has no push series")
	}
	p.SubscriptionPut(q) // and back
	if got := pushFamilies(MustScrape(t, p.Handler()), "q"); len(got) != 0 {
		t.Errorf("the subscription that became a queue again keeps push series %v", got)
	}
}
