package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/pull"
)

// Pull measures the queue subscriptions (pkg/pull) into a Prometheus
// registry. It implements pull.Metrics and eventgrid.SubscriptionObserver
// (a deleted subscription's series are removed); every method is safe for
// concurrent use.
type Pull struct {
	received, settled, expired, deadLettered, dropped *prometheus.CounterVec

	stats atomic.Pointer[func() []pull.SubscriptionCounts]
}

var (
	_ pull.Metrics                   = (*Pull)(nil)
	_ eventgrid.SubscriptionObserver = (*Pull)(nil)
)

// Pull registers the queue subscriptions' series in p's registry and
// returns what measures them. Call it once.
func (p *Prometheus) Pull() *Pull {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append([]string{labelTopic, labelSubscription}, labels...))
	}
	m := &Pull{
		received:     counter("eventgrid_queue_received_total", "Events handed out to receivers of a queue subscription (a redelivery counts again)."),
		settled:      counter("eventgrid_queue_settled_total", "Lock tokens settled successfully, by kind: acknowledge, release, reject, renewLock.", "kind"),
		expired:      counter("eventgrid_queue_lock_expired_total", "Locks that expired unsettled; their events became available again or were dead-lettered or dropped."),
		deadLettered: counter("eventgrid_queue_dead_lettered_total", "Events of a queue subscription handed to its dead-letter destination, by reason.", labelReason),
		dropped:      counter("eventgrid_queue_dropped_total", "Events of a queue subscription discarded, by reason.", labelReason),
	}
	p.reg.MustRegister(m.received, m.settled, m.expired, m.deadLettered, m.dropped, pullCollector{m})
	return m
}

// Collect sets the function the queue depth gauges are read from at every
// scrape (pull.Store.Stats); nil removes them.
func (m *Pull) Collect(stats func() []pull.SubscriptionCounts) {
	if stats == nil {
		m.stats.Store(nil)
		return
	}
	m.stats.Store(&stats)
}

func labels(sub *eventgrid.EventSubscription) []string { return []string{sub.Topic, sub.Name} }

// Received implements pull.Metrics.
func (m *Pull) Received(sub *eventgrid.EventSubscription, n int) {
	m.received.WithLabelValues(labels(sub)...).Add(float64(n))
}

// Settled implements pull.Metrics.
func (m *Pull) Settled(sub *eventgrid.EventSubscription, kind string, n int) {
	m.settled.WithLabelValues(sub.Topic, sub.Name, kind).Add(float64(n))
}

// LockExpired implements pull.Metrics.
func (m *Pull) LockExpired(sub *eventgrid.EventSubscription, n int) {
	m.expired.WithLabelValues(labels(sub)...).Add(float64(n))
}

// DeadLettered implements pull.Metrics.
func (m *Pull) DeadLettered(sub *eventgrid.EventSubscription, reason string, n int) {
	m.deadLettered.WithLabelValues(sub.Topic, sub.Name, reason).Add(float64(n))
}

// Dropped implements pull.Metrics.
func (m *Pull) Dropped(sub *eventgrid.EventSubscription, reason string, n int) {
	m.dropped.WithLabelValues(sub.Topic, sub.Name, reason).Add(float64(n))
}

// SubscriptionPut implements eventgrid.SubscriptionObserver.
func (m *Pull) SubscriptionPut(*eventgrid.EventSubscription) {}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: the
// subscription's series go with it.
func (m *Pull) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	if !sub.IsQueue() {
		return
	}
	l := prometheus.Labels{labelTopic: sub.Topic, labelSubscription: sub.Name}
	for _, v := range []*prometheus.CounterVec{m.received, m.settled, m.expired, m.deadLettered, m.dropped} {
		v.DeletePartialMatch(l)
	}
}

var queueDepthDesc = prometheus.NewDesc("eventgrid_queue_events",
	"Events a queue subscription holds, by state: available to receive, locked by a receiver, delayed by a release.",
	[]string{labelTopic, labelSubscription, "state"}, nil)

var waitingDesc = prometheus.NewDesc("eventgrid_queue_receives_waiting",
	"Receive requests of a queue subscription waiting for events (long polling).",
	[]string{labelTopic, labelSubscription}, nil)

// pullCollector reports the queue depth gauges at scrape time.
type pullCollector struct{ m *Pull }

func (c pullCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueDepthDesc
	ch <- waitingDesc
}

func (c pullCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.m.stats.Load()
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
	}
}
