package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgegrid/edgegrid/pkg/push"
)

// Values of the queue label. The two back-off queues are named after the
// original module's shared __BACKOFF_1_1MINS and __BACKOFF_2_10MINS.
const (
	queueReady    = "ready"
	queueBackoff1 = "backoff_1"
	queueBackoff2 = "backoff_2"
	// queueScheduled holds the events waiting on the CloudExponential
	// schedule.
	queueScheduled = "scheduled"
)

// statsCollector reads the push delivery engine's queues at every scrape;
// what the broker holds in its budget is heldCollector's.
type statsCollector struct {
	stats *atomic.Pointer[func() push.Stats]

	pushEvents, backoffDepth, inFlight, probation *prometheus.Desc
}

// pausedDesc is the gauge of paused subscriptions, push (statsCollector)
// and queue (queuesCollector) alike.
var pausedDesc = prometheus.NewDesc("eventgrid_subscription_paused",
	"1 while an operator has paused the subscription's delivery (docs/delivery.md#pause-and-resume), else 0.",
	[]string{labelTopic, labelSubscription}, nil)

func newStatsCollector(stats *atomic.Pointer[func() push.Stats]) *statsCollector {
	return &statsCollector{
		stats: stats,
		pushEvents: prometheus.NewDesc("eventgrid_push_events",
			"Events a push subscription holds, by state: ready for an attempt, in the first or second back-off queue, or scheduled (CloudExponential).",
			[]string{labelTopic, labelSubscription, labelState}, nil),
		backoffDepth: prometheus.NewDesc("eventgrid_backoff_queue_depth",
			"Events waiting in a back-off queue, over all subscriptions.",
			[]string{labelQueue}, nil),
		inFlight: prometheus.NewDesc("eventgrid_deliveries_in_flight",
			"Delivery requests in flight.", nil, nil),
		probation: prometheus.NewDesc("eventgrid_subscription_on_probation",
			"1 while a CloudExponential subscription's endpoint is on probation (new events skip the immediate attempt), else 0.",
			[]string{labelTopic, labelSubscription}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pushEvents
	ch <- c.backoffDepth
	ch <- c.inFlight
	ch <- c.probation
	ch <- pausedDesc
}

// Collect implements prometheus.Collector. Queues of the same topic and
// subscription names are summed, so that a subscription deleted and created
// again while a scrape runs cannot produce duplicate series.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.stats.Load()
	if f == nil {
		return
	}
	st := (*f)()
	type key struct{ topic, name string }
	depths := make(map[key]*[6]int, len(st.Queues))
	order := make([]key, 0, len(st.Queues))
	var backoff [2]int
	for _, q := range st.Queues {
		if q.Subscription == nil {
			continue
		}
		k := key{q.Subscription.Topic, q.Subscription.Name}
		d, ok := depths[k]
		if !ok {
			d = new([6]int)
			depths[k] = d
			order = append(order, k)
		}
		d[0] += q.Ready
		d[1] += q.Backoff[0]
		d[2] += q.Backoff[1]
		d[3] += q.Scheduled
		if !q.ProbationUntil.IsZero() {
			d[4] = 1
		}
		if !q.PausedSince.IsZero() {
			d[5] = 1
		}
		backoff[0] += q.Backoff[0]
		backoff[1] += q.Backoff[1]
	}
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	for _, k := range order {
		d := depths[k]
		gauge(c.pushEvents, int64(d[0]), k.topic, k.name, queueReady)
		gauge(c.pushEvents, int64(d[1]), k.topic, k.name, queueBackoff1)
		gauge(c.pushEvents, int64(d[2]), k.topic, k.name, queueBackoff2)
		gauge(c.pushEvents, int64(d[3]), k.topic, k.name, queueScheduled)
		gauge(c.probation, int64(d[4]), k.topic, k.name)
		gauge(pausedDesc, int64(d[5]), k.topic, k.name)
	}
	gauge(c.backoffDepth, int64(backoff[0]), queueBackoff1)
	gauge(c.backoffDepth, int64(backoff[1]), queueBackoff2)
	gauge(c.inFlight, int64(st.InFlight))
}
