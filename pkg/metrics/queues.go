package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgegrid/edgegrid/pkg/queue"
)

// CollectQueues sets the function the queue subscriptions' gauges are read
// from at every scrape (queue.Store.Stats); nil removes them.
func (p *Prometheus) CollectQueues(stats func() []queue.SubscriptionCounts) {
	if stats == nil {
		p.queues.Store(nil)
		return
	}
	p.queues.Store(&stats)
}

var queueDepthDesc = prometheus.NewDesc("eventgrid_queue_events",
	"Events a queue subscription holds, by state: available to receive, locked by a receiver, delayed by a release.",
	[]string{labelTopic, labelSubscription, labelState}, nil)

var waitingDesc = prometheus.NewDesc("eventgrid_queue_receives_waiting",
	"Receive requests of a queue subscription waiting for events (long polling).",
	[]string{labelTopic, labelSubscription}, nil)

// queuesCollector reports the queue subscriptions' gauges at scrape time.
type queuesCollector struct {
	stats *atomic.Pointer[func() []queue.SubscriptionCounts]
}

func (c queuesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- waitingDesc
	// pausedDesc, which it also reports, is described once, by
	// statsCollector: a registry takes each descriptor once.
}

func (c queuesCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.stats.Load()
	if f == nil {
		return
	}
	for _, s := range (*f)() {
		for _, st := range []struct {
			name string
			n    int
		}{{"available", s.Available}, {"locked", s.Locked}, {"delayed", s.Delayed}} {
			ch <- prometheus.MustNewConstMetric(queueDepthDesc, prometheus.GaugeValue, float64(st.n), s.Subscription.Topic, s.Subscription.Name, st.name)
		}
		ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(s.Waiting), s.Subscription.Topic, s.Subscription.Name)
		paused := 0.0
		if s.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, paused, s.Subscription.Topic, s.Subscription.Name)
	}
}
