package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgegrid/edgegrid/pkg/dispatch"
)

// heldCollector reports, at every scrape, what the broker holds in its
// budget: broker-wide, and per subscription in the same two gauges for
// push and queue subscriptions alike.
type heldCollector struct {
	held *atomic.Pointer[func() dispatch.Holdings]

	queuedEvents, queuedBytes, subEvents, subBytes, waiting *prometheus.Desc
}

func newHeldCollector(held *atomic.Pointer[func() dispatch.Holdings]) *heldCollector {
	return &heldCollector{
		held: held,
		queuedEvents: prometheus.NewDesc("eventgrid_queued_events",
			"Deliveries the broker holds for push and queue subscriptions, counted against broker__maxQueuedEvents.", nil, nil),
		queuedBytes: prometheus.NewDesc("eventgrid_queued_bytes",
			"Bytes of the requests the held deliveries belong to, converted copies included, counted against broker__maxQueuedBytes.", nil, nil),
		subEvents: prometheus.NewDesc("eventgrid_subscription_held_events",
			"Deliveries a subscription holds, push or queue (queued, waiting to be retried, in flight, available, locked or delayed), against broker__maxQueuedEventsPerSubscription.",
			[]string{labelTopic, labelSubscription}, nil),
		subBytes: prometheus.NewDesc("eventgrid_subscription_held_bytes",
			"Bytes of the bodies a subscription holds, push or queue, against broker__maxQueuedBytesPerSubscription.",
			[]string{labelTopic, labelSubscription}, nil),
		waiting: prometheus.NewDesc("eventgrid_publish_requests_waiting",
			"Publish requests held for room now, waiting for deliveries to drain a full share or the broker's bounds (broker__publishHoldInMilliseconds).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *heldCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.queuedEvents
	ch <- c.queuedBytes
	ch <- c.subEvents
	ch <- c.subBytes
	ch <- c.waiting
}

// Collect implements prometheus.Collector. Subscriptions of the same topic
// and name are summed, so that one deleted and created again while a
// scrape runs cannot produce duplicate series.
func (c *heldCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.held.Load()
	if f == nil {
		return
	}
	h := (*f)()
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	gauge(c.queuedEvents, h.Events)
	gauge(c.queuedBytes, h.Bytes)
	gauge(c.waiting, int64(h.Waiting))
	type key struct{ topic, name string }
	sums := make(map[key]*[2]int64, len(h.Subscriptions))
	order := make([]key, 0, len(h.Subscriptions))
	for _, s := range h.Subscriptions {
		k := key{s.Subscription.Topic, s.Subscription.Name}
		sum, ok := sums[k]
		if !ok {
			sum = new([2]int64)
			sums[k] = sum
			order = append(order, k)
		}
		sum[0] += s.Events
		sum[1] += s.Bytes
	}
	for _, k := range order {
		gauge(c.subEvents, sums[k][0], k.topic, k.name)
		gauge(c.subBytes, sums[k][1], k.topic, k.name)
	}
}

// CollectHeld sets the function the held gauges are read from at every
// scrape (dispatch.Dispatcher.Holdings); it must be safe for concurrent
// use. nil removes the gauges.
func (p *Prometheus) CollectHeld(held func() dispatch.Holdings) {
	if held == nil {
		p.held.Store(nil)
		return
	}
	p.held.Store(&held)
}
