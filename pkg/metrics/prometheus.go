package metrics

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// Label names.
const (
	labelTopic        = "topic"
	labelSubscription = "subscription"
	labelReason       = "reason"
	labelQueue        = "queue"
	labelState        = "state"
	labelAction       = "action"
)

// requestBucketsMs are the latency buckets of publish requests, which a
// broker on loopback answers in well under a millisecond to a few seconds.
var requestBucketsMs = []float64{0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000}

// deliveryBucketsMs extend them for deliveries, which may wait for a slow
// subscriber up to the delivery timeout (60 s by default), and for the delay
// before a first attempt, which grows with the backlog.
var deliveryBucketsMs = append(requestBucketsMs[:len(requestBucketsMs):len(requestBucketsMs)], 10000, 30000, 60000, 120000)

// Prometheus keeps the broker's metrics in its own registry (never the
// global one) and serves them with Handler. It implements outcome.Metrics
// (the deliveries of both modes), api.Metrics, dispatch.Metrics and
// eventgrid.SubscriptionObserver; every method is safe for concurrent use
// and none blocks on I/O.
//
// Series are labelled with the names topics and subscriptions were created
// with. When Prometheus is told about subscriptions as an observer (after
// the first SubscriptionPut), it keeps subscription series only for the
// subscriptions that exist: their series appear, at zero, when they are
// created and are removed when they are deleted, and measurements that
// arrive late for a deleted subscription (a request still in flight, the
// events discarded with it) are ignored. Until then, series are created on
// first use and only ForgetSubscription and ForgetTopic remove them.
type Prometheus struct {
	reg     *prometheus.Registry
	handler http.Handler

	eventsReceived, unmatched, successRequests, systemErrors, userErrors *prometheus.CounterVec
	requestLatency                                                       *prometheus.HistogramVec

	delivered, failed, attempts, expired         *prometheus.CounterVec
	successLatency, failureLatency, firstAttempt *prometheus.HistogramVec
	dropped                                      *prometheus.CounterVec
	deadLettered                                 *prometheus.CounterVec
	settled, lockExpired                         *prometheus.CounterVec
	deadLetterWritten, deadLetterFailed          *prometheus.CounterVec
	deadLetterDropped                            *prometheus.CounterVec
	rejected                                     *prometheus.CounterVec
	authFailures                                 *prometheus.CounterVec
	actions, actionEvents, evicted               *prometheus.CounterVec

	stats  atomic.Pointer[func() push.Stats]
	held   atomic.Pointer[func() dispatch.Holdings]
	queues atomic.Pointer[func() []queue.SubscriptionCounts]

	mu       sync.RWMutex
	topics   map[string]*topicSeries // by topic name as reported
	subs     map[uint64]*subSeries   // by subscription UID
	observed bool                    // SubscriptionPut was called
}

var (
	_ outcome.Metrics                = (*Prometheus)(nil)
	_ eventgrid.SubscriptionObserver = (*Prometheus)(nil)
)

// topicSeries are the series of one topic.
type topicSeries struct {
	received, unmatched, success, systemErrors, userErrors prometheus.Counter
	latency                                                prometheus.Observer
}

// NewPrometheus returns metrics registered in a new registry, which also
// holds the Go runtime and process collectors.
func NewPrometheus() *Prometheus {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	t, ts := labelTopic, labelSubscription
	p := &Prometheus{
		reg:               prometheus.NewRegistry(),
		eventsReceived:    counter("eventgrid_topic_events_received_total", "Events accepted by publish requests (EventsReceived).", t),
		unmatched:         counter("eventgrid_topic_unmatched_events_total", "Accepted events that matched no subscription and were dropped (UnmatchedEvents).", t),
		successRequests:   counter("eventgrid_topic_success_requests_total", "Publish requests answered with 2xx (SuccessRequests).", t),
		systemErrors:      counter("eventgrid_topic_system_error_requests_total", "Publish requests answered with 5xx (SystemErrorRequests).", t),
		userErrors:        counter("eventgrid_topic_user_error_requests_total", "Publish requests answered with 4xx (UserErrorRequests).", t),
		requestLatency:    histogram("eventgrid_topic_success_request_latency_ms", "Latency of successful publish requests in milliseconds (SuccessRequestLatencyMs).", requestBucketsMs, t),
		delivered:         counter("eventgrid_subscription_delivery_success_total", "Events delivered: accepted by the destination, or acknowledged by a queue subscription's receiver (DeliverySuccessCounts).", t, ts),
		failed:            counter("eventgrid_subscription_delivery_failure_total", "Events in failed delivery attempts: in failed requests, or a queue subscription's events released or whose lock expired (DeliveryFailureCounts).", t, ts),
		attempts:          counter("eventgrid_subscription_delivery_attempts_total", "Event delivery attempts: n per request of n events, or per event handed to a queue subscription's receiver (DeliveryAttemptsCount).", t, ts),
		expired:           counter("eventgrid_subscription_expired_total", "Events dropped by the retry policy: time to live or attempts exhausted, or an answer never retried (ExpiredCounts).", t, ts),
		successLatency:    histogram("eventgrid_subscription_delivery_success_latency_ms", "Latency of successful delivery requests in milliseconds (DeliverySuccessLatencyMs).", deliveryBucketsMs, t, ts),
		failureLatency:    histogram("eventgrid_subscription_delivery_failure_latency_ms", "Latency of failed delivery requests in milliseconds (DeliveryFailureLatencyMs).", deliveryBucketsMs, t, ts),
		firstAttempt:      histogram("eventgrid_subscription_system_delay_for_first_attempt_ms", "Time from acceptance to the first delivery attempt in milliseconds (SystemDelayForFirstAttemptMs).", deliveryBucketsMs, t, ts),
		dropped:           counter("eventgrid_events_dropped_total", "Events that left a subscription undelivered and were not dead-lettered, by reason (docs/metrics.md#reasons).", t, ts, labelReason),
		deadLettered:      counter("eventgrid_subscription_dead_lettered_total", "Events handed to the subscription's dead-letter destination, by reason (deadLetterReason).", t, ts, labelReason),
		settled:           counter("eventgrid_queue_settled_total", "Lock tokens of a queue subscription settled successfully, by kind: acknowledge, release, reject, renewLock.", t, ts, "kind"),
		lockExpired:       counter("eventgrid_queue_lock_expired_total", "Locks of a queue subscription that expired unsettled; their events became available again or were given up on.", t, ts),
		deadLetterWritten: counter("eventgrid_dead_letter_written_total", "Dead-lettered events written to their blob container.", t, ts),
		deadLetterFailed:  counter("eventgrid_dead_letter_write_failures_total", "Failed writes of dead letters to blob storage (each is retried).", t, ts),
		deadLetterDropped: counter("eventgrid_dead_letter_dropped_total", "Dead-lettered events dropped because storage did not take them in time, or at shutdown.", t, ts),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "eventgrid_publish_rejected_total",
			Help: "Publish requests refused for room, by reason: broker_full, subscription_full and bodies_in_flight with 503, too_large with 413 (the broker could never hold them).",
		}, []string{labelReason}),
		authFailures: counter("eventgrid_auth_failures_total", "Requests refused with 401 (reason no_credentials, sas_key, sas_token or client_certificate) or 403 (reason permission).", labelReason),
		topics:       map[string]*topicSeries{},
		subs:         map[uint64]*subSeries{},
	}
	p.actions, p.actionEvents, p.evicted = operatorCounters()
	for _, r := range auth.FailureKinds {
		p.authFailures.WithLabelValues(r)
	}
	for _, r := range eventgrid.RefusalReasons {
		p.rejected.WithLabelValues(r)
	}
	p.reg.MustRegister(
		p.eventsReceived, p.unmatched, p.successRequests, p.systemErrors, p.userErrors, p.requestLatency,
		p.delivered, p.failed, p.attempts, p.expired, p.successLatency, p.failureLatency, p.firstAttempt,
		p.dropped, p.deadLettered, p.settled, p.lockExpired,
		p.deadLetterWritten, p.deadLetterFailed, p.deadLetterDropped, p.rejected, p.authFailures,
		p.actions, p.actionEvents, p.evicted,
		newStatsCollector(&p.stats),
		newHeldCollector(&p.held),
		queuesCollector{&p.queues},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	p.handler = promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return p
}

// operatorCounters returns the counters of the operator's actions and of
// the given-up lists' evictions.
func operatorCounters() (actions, actionEvents, evicted *prometheus.CounterVec) {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	return counter("eventgrid_subscription_actions_total", "An operator's actions on a subscription (docs/api.md#actions), by action: retryNow, redrive, pause, resume, purge.", labelTopic, labelSubscription, labelAction),
		counter("eventgrid_subscription_action_events_total", "Events an operator's actions moved: made ready by retryNow, redriven, purged.", labelTopic, labelSubscription, labelAction),
		counter("eventgrid_subscription_given_up_evicted_total", "Entries of a subscription's given-up list that its bounds (broker__maxFailuresPerSubscription, broker__maxFailureBytesPerSubscription) pushed out for newer ones.", labelTopic, labelSubscription)
}

// Handler returns the handler of GET /metrics: the registry in the
// Prometheus text format.
func (p *Prometheus) Handler() http.Handler { return p.handler }

// Collect sets the function the queue gauges are read from at every scrape;
// it is called on each scrape, never cached, and must be safe for concurrent
// use (push.Engine.Stats is). nil removes the gauges.
func (p *Prometheus) Collect(stats func() push.Stats) {
	if stats == nil {
		p.stats.Store(nil)
		return
	}
	p.stats.Store(&stats)
}

// Published implements api.Metrics.
func (p *Prometheus) Published(topic string, status int, latency time.Duration, received, unmatched int) {
	t := p.topic(topic)
	if received > 0 {
		t.received.Add(float64(received))
	}
	if unmatched > 0 {
		t.unmatched.Add(float64(unmatched))
	}
	switch {
	case status >= 200 && status < 300:
		t.success.Inc()
		t.latency.Observe(ms(latency))
	case status >= 500:
		t.systemErrors.Inc()
	case status >= 400:
		t.userErrors.Inc()
	}
}

// AuthFailed implements api.Metrics.
func (p *Prometheus) AuthFailed(reason string) { p.authFailures.WithLabelValues(reason).Inc() }

// Rejected implements dispatch.Metrics and api.Metrics.
func (p *Prometheus) Rejected(reason string) { p.rejected.WithLabelValues(reason).Inc() }

// Acted implements api.ActionMetrics: an operator's action on sub, which
// moved events events (0 for pause and resume).
func (p *Prometheus) Acted(sub *eventgrid.EventSubscription, action string, events int) {
	p.addSub(p.actions, sub, 1, action)
	if events > 0 {
		p.addSub(p.actionEvents, sub, float64(events), action)
	}
}

// SubscriptionPut implements eventgrid.SubscriptionObserver: the
// subscription's series appear at zero: those both delivery modes have,
// and those of its own mode (docs/metrics.md). From the first call on,
// Prometheus keeps series only for the subscriptions it was told about.
func (p *Prometheus) SubscriptionPut(sub *eventgrid.EventSubscription) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observed = true
	if s, ok := p.subs[sub.UID]; ok {
		if s.topic == sub.Topic && s.name == sub.Name && s.queue == sub.IsQueue() {
			return
		}
		p.deleteSubSeriesLocked(s.topic, s.name)
	}
	p.subs[sub.UID] = p.newSubSeriesLocked(sub)
}

// SubscriptionDeleted implements eventgrid.SubscriptionObserver: the
// subscription's series are removed.
func (p *Prometheus) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.subs[sub.UID]; ok {
		delete(p.subs, sub.UID)
		p.deleteSubSeriesLocked(s.topic, s.name)
	}
	p.deleteSubSeriesLocked(sub.Topic, sub.Name)
}

// ForgetSubscription removes the series of a deleted subscription; names
// match case-insensitively.
func (p *Prometheus) ForgetSubscription(topic, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, s := range p.subs {
		if strings.EqualFold(s.topic, topic) && strings.EqualFold(s.name, name) {
			delete(p.subs, uid)
			p.deleteSubSeriesLocked(s.topic, s.name)
		}
	}
	p.deleteSubSeriesLocked(topic, name)
}

// TopicDeleted implements api.Metrics: it forgets the topic's series.
func (p *Prometheus) TopicDeleted(name string) { p.ForgetTopic(name) }

// ForgetTopic removes the series of a deleted topic and of all of its
// subscriptions; the name matches case-insensitively. A publish request
// that races the deletion may bring the topic's series back.
func (p *Prometheus) ForgetTopic(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := map[string]struct{}{name: {}}
	for t := range p.topics {
		if strings.EqualFold(t, name) {
			names[t] = struct{}{}
			delete(p.topics, t)
		}
	}
	for uid, s := range p.subs {
		if strings.EqualFold(s.topic, name) {
			names[s.topic] = struct{}{}
			delete(p.subs, uid)
		}
	}
	for t := range names {
		for _, v := range []*prometheus.CounterVec{p.eventsReceived, p.unmatched, p.successRequests, p.systemErrors, p.userErrors} {
			v.DeleteLabelValues(t)
		}
		p.requestLatency.DeleteLabelValues(t)
		match := prometheus.Labels{labelTopic: t}
		for _, v := range []*prometheus.CounterVec{p.delivered, p.failed, p.attempts, p.expired, p.dropped, p.deadLettered,
			p.settled, p.lockExpired, p.deadLetterWritten, p.deadLetterFailed, p.deadLetterDropped,
			p.actions, p.actionEvents, p.evicted} {
			v.DeletePartialMatch(match)
		}
		for _, v := range []*prometheus.HistogramVec{p.successLatency, p.failureLatency, p.firstAttempt} {
			v.DeletePartialMatch(match)
		}
	}
}

// topic returns the series of a topic, creating them on first use.
func (p *Prometheus) topic(name string) *topicSeries {
	p.mu.RLock()
	t, ok := p.topics[name]
	p.mu.RUnlock()
	if ok {
		return t
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.topics[name]; ok {
		return t
	}
	t = &topicSeries{
		received:     p.eventsReceived.WithLabelValues(name),
		unmatched:    p.unmatched.WithLabelValues(name),
		success:      p.successRequests.WithLabelValues(name),
		systemErrors: p.systemErrors.WithLabelValues(name),
		userErrors:   p.userErrors.WithLabelValues(name),
		latency:      p.requestLatency.WithLabelValues(name),
	}
	p.topics[name] = t
	return t
}

// DeadLetterWritten implements deadletter.Metrics.
func (p *Prometheus) DeadLetterWritten(sub *eventgrid.EventSubscription, n int) {
	p.addSub(p.deadLetterWritten, sub, float64(n))
}

// DeadLetterWriteFailed implements deadletter.Metrics.
func (p *Prometheus) DeadLetterWriteFailed(sub *eventgrid.EventSubscription) {
	p.addSub(p.deadLetterFailed, sub, 1)
}

// DeadLetterDropped implements deadletter.Metrics.
func (p *Prometheus) DeadLetterDropped(sub *eventgrid.EventSubscription, n int) {
	p.addSub(p.deadLetterDropped, sub, float64(n))
}

// addSub adds v to the subscription's series of vec, labelled as the
// subscription was created. Once subscriptions are observed, a deleted
// subscription's letters (written, failed or dropped after the deletion)
// are not counted: counting them would bring its series back. The read
// lock keeps SubscriptionDeleted from removing the series in between.
func (p *Prometheus) addSub(vec *prometheus.CounterVec, sub *eventgrid.EventSubscription, v float64, extra ...string) {
	p.mu.RLock()
	s, ok := p.subs[sub.UID]
	observed := p.observed
	if ok {
		vec.WithLabelValues(append([]string{s.topic, s.name}, extra...)...).Add(v)
	}
	p.mu.RUnlock()
	if ok || observed {
		return
	}
	if s := p.sub(sub); s != nil {
		vec.WithLabelValues(append([]string{s.topic, s.name}, extra...)...).Add(v)
	}
}

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
