package metrics

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"
)

// DefaultConsoleInterval is the interval of the console reporter unless
// one is set: the original broker's reportingIntervalInSeconds.
const DefaultConsoleInterval = time.Minute

// Console is the console reporter (metrics__reporterType=console): it
// measures like Prometheus, which it embeds (so it implements the same
// interfaces, Collect and Forget* included), and logs a summary every
// interval: a "topic metrics" line per topic and a "subscription metrics"
// line per subscription with activity since the previous summary (counts
// over the interval, mean latencies) or with queued events, then a "broker
// metrics" line with the queue gauges and the publish refusals and
// authentication failures over the interval. Its methods are safe for
// concurrent use.
type Console struct {
	*Prometheus
	interval time.Duration
	log      zerolog.Logger

	mu     sync.Mutex         // serialises reports; guards the fields below
	prev   map[string]float64 // values at the previous report, by series key
	cancel context.CancelFunc
	done   chan struct{}
	closed bool
}

// NewConsole returns a console reporter logging to log every interval
// (DefaultConsoleInterval if interval <= 0) once Run is called.
func NewConsole(interval time.Duration, log zerolog.Logger) *Console {
	if interval <= 0 {
		interval = DefaultConsoleInterval
	}
	return &Console{
		Prometheus: NewPrometheus(),
		interval:   interval,
		log:        log.With().Str("component", "metrics").Logger(),
		prev:       map[string]float64{},
	}
}

// Run starts the goroutine that reports every interval and returns at once.
// The goroutine stops when ctx is done or Close is called. Run returns an
// error if the reporter is already running or was closed.
func (c *Console) Run(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return errors.New("metrics: console reporter is closed")
	case c.cancel != nil:
		return errors.New("metrics: console reporter is already running")
	}
	ctx, c.cancel = context.WithCancel(ctx)
	c.done = make(chan struct{})
	go c.loop(ctx, c.done)
	return nil
}

func (c *Console) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Report()
		}
	}
}

// Close stops the reporting goroutine, waits for it, and logs a last
// summary of the activity since the previous one. Later calls do nothing.
// It always returns nil.
func (c *Console) Close(context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	c.Report()
	return nil
}

// topicLine is one topic's activity over an interval.
type topicLine struct {
	received, unmatched, success, systemErrors, userErrors float64
	latency                                                hist
}

// subLine is one subscription's activity over an interval and its queues:
// those of a push subscription, or, when queue is set, of a queue
// subscription.
type subLine struct {
	delivered, failed, attempts, expired float64
	successLat, failureLat, firstAttempt hist
	dropped, deadLettered, settled       map[string]float64
	actions                              map[string]float64
	locksExpired, evicted, paused        float64
	ready, backoff1, backoff2            float64
	queue                                bool
	available, locked, delayed           float64
}

// active reports whether the line has anything to say.
func (l *subLine) active() bool {
	return l.attempts != 0 || l.delivered != 0 || l.failed != 0 || l.expired != 0 || len(l.dropped) != 0 ||
		len(l.deadLettered) != 0 || len(l.settled) != 0 || len(l.actions) != 0 || l.evicted != 0 || l.paused != 0 ||
		l.locksExpired != 0 || l.firstAttempt.count != 0 ||
		l.ready != 0 || l.backoff1 != 0 || l.backoff2 != 0 || l.available != 0 || l.locked != 0 || l.delayed != 0
}

// hist is a histogram's count and sum over an interval.
type hist struct{ count, sum float64 }

func (h hist) mean() float64 { return h.sum / h.count }

// brokerLine holds the broker-wide values.
type brokerLine struct {
	queuedEvents, queuedBytes, inFlight, backoff1, backoff2, rejected, authFailures float64
}

// subKey names a subscription in a summary.
type subKey struct{ topic, name string }

// summary is one report's content, built from a gathering of the registry.
type summary struct {
	prev, cur map[string]float64 // counter values at the previous report and now, by series key
	topics    map[string]*topicLine
	subs      map[subKey]*subLine
	broker    brokerLine
}

// Report logs a summary now: the activity since the previous report (or
// since the start) and the current queue depths.
func (c *Console) Report() {
	c.mu.Lock()
	defer c.mu.Unlock()
	fams, err := c.reg.Gather()
	if err != nil {
		c.log.Warn().Err(err).Msg("gathering metrics")
	}
	s := &summary{prev: c.prev, cur: make(map[string]float64, len(c.prev)), topics: map[string]*topicLine{}, subs: map[subKey]*subLine{}}
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			s.add(mf.GetName(), m)
		}
	}
	c.prev = s.cur
	c.logTopics(s.topics)
	c.logSubscriptions(s.subs)
	c.logBroker(s.broker)
}

// delta records v under key and returns its increase since the previous
// report; a decrease means the series was deleted and created again.
func (s *summary) delta(key string, v float64) float64 {
	s.cur[key] = v
	if p := s.prev[key]; v >= p {
		return v - p
	}
	return v
}

func (s *summary) topic(m *dto.Metric) *topicLine {
	t := label(m, labelTopic)
	if s.topics[t] == nil {
		s.topics[t] = &topicLine{}
	}
	return s.topics[t]
}

func (s *summary) sub(m *dto.Metric) *subLine {
	k := subKey{label(m, labelTopic), label(m, labelSubscription)}
	if s.subs[k] == nil {
		s.subs[k] = &subLine{dropped: map[string]float64{}, deadLettered: map[string]float64{}, settled: map[string]float64{},
			actions: map[string]float64{}}
	}
	return s.subs[k]
}

// series is one series of a metric, as the summary reads it: counters
// and histograms as their increase since the previous report.
type series struct {
	s   *summary
	key string
	m   *dto.Metric
}

func (v series) counter() float64 { return v.s.delta(v.key, v.m.GetCounter().GetValue()) }

func (v series) histogram() hist {
	h := v.m.GetHistogram()
	return hist{v.s.delta(v.key+"#count", float64(h.GetSampleCount())), v.s.delta(v.key+"#sum", h.GetSampleSum())}
}

func (v series) gauge() float64 { return v.m.GetGauge().GetValue() }

// add takes one series of the metric name into the summary.
func (s *summary) add(name string, m *dto.Metric) {
	v := series{s: s, key: seriesKey(name, m), m: m}
	if !s.addTopic(name, v) && !s.addSubscription(name, v) {
		s.addBroker(name, v)
	}
}

// addTopic takes a topic metric into its topic's line; false for other
// metrics.
func (s *summary) addTopic(name string, v series) bool {
	switch name {
	case "eventgrid_topic_events_received_total":
		s.topic(v.m).received = v.counter()
	case "eventgrid_topic_unmatched_events_total":
		s.topic(v.m).unmatched = v.counter()
	case "eventgrid_topic_success_requests_total":
		s.topic(v.m).success = v.counter()
	case "eventgrid_topic_system_error_requests_total":
		s.topic(v.m).systemErrors = v.counter()
	case "eventgrid_topic_user_error_requests_total":
		s.topic(v.m).userErrors = v.counter()
	case "eventgrid_topic_success_request_latency_ms":
		s.topic(v.m).latency = v.histogram()
	default:
		return false
	}
	return true
}

// addSubscription takes a subscription metric into its subscription's
// line; false for other metrics.
func (s *summary) addSubscription(name string, v series) bool {
	switch name {
	case "eventgrid_subscription_delivery_success_total":
		s.sub(v.m).delivered = v.counter()
	case "eventgrid_subscription_delivery_failure_total":
		s.sub(v.m).failed = v.counter()
	case "eventgrid_subscription_delivery_attempts_total":
		s.sub(v.m).attempts = v.counter()
	case "eventgrid_subscription_expired_total":
		s.sub(v.m).expired = v.counter()
	case "eventgrid_subscription_delivery_success_latency_ms":
		s.sub(v.m).successLat = v.histogram()
	case "eventgrid_subscription_delivery_failure_latency_ms":
		s.sub(v.m).failureLat = v.histogram()
	case "eventgrid_subscription_system_delay_for_first_attempt_ms":
		s.sub(v.m).firstAttempt = v.histogram()
	case "eventgrid_events_dropped_total":
		addNonZero(s.sub(v.m).dropped, label(v.m, labelReason), v.counter())
	case "eventgrid_subscription_dead_lettered_total":
		addNonZero(s.sub(v.m).deadLettered, label(v.m, labelReason), v.counter())
	case "eventgrid_subscription_actions_total":
		addNonZero(s.sub(v.m).actions, label(v.m, labelAction), v.counter())
	case "eventgrid_subscription_given_up_evicted_total":
		s.sub(v.m).evicted = v.counter()
	case "eventgrid_subscription_paused":
		s.sub(v.m).paused = v.gauge()
	default:
		return s.addQueueSubscription(name, v)
	}
	return true
}

// addNonZero sets m[k] to d unless d is zero.
func addNonZero(m map[string]float64, k string, d float64) {
	if d != 0 {
		m[k] = d
	}
}

// addQueueSubscription takes a metric of one subscription's queue, push
// or queue mode, into its line; false for other metrics.
func (s *summary) addQueueSubscription(name string, v series) bool {
	switch name {
	case "eventgrid_queue_settled_total":
		addNonZero(s.sub(v.m).settled, label(v.m, "kind"), v.counter())
	case "eventgrid_queue_lock_expired_total":
		sub := s.sub(v.m)
		sub.queue = true // a queue subscription's series only
		sub.locksExpired = v.counter()
	case "eventgrid_queue_events":
		sub := s.sub(v.m)
		sub.queue = true
		switch label(v.m, labelState) {
		case "available":
			sub.available = v.gauge()
		case "locked":
			sub.locked = v.gauge()
		case "delayed":
			sub.delayed = v.gauge()
		}
	case "eventgrid_push_events":
		sub := s.sub(v.m)
		switch label(v.m, labelState) {
		case queueReady:
			sub.ready = v.gauge()
		case queueBackoff1:
			sub.backoff1 = v.gauge()
		case queueBackoff2:
			sub.backoff2 = v.gauge()
		}
	default:
		return false
	}
	return true
}

// addBroker takes a broker-wide metric into the broker's line.
func (s *summary) addBroker(name string, v series) {
	switch name {
	case "eventgrid_backoff_queue_depth":
		if label(v.m, labelQueue) == queueBackoff1 {
			s.broker.backoff1 = v.gauge()
		} else {
			s.broker.backoff2 = v.gauge()
		}
	case "eventgrid_deliveries_in_flight":
		s.broker.inFlight = v.gauge()
	case "eventgrid_queued_events":
		s.broker.queuedEvents = v.gauge()
	case "eventgrid_queued_bytes":
		s.broker.queuedBytes = v.gauge()
	case "eventgrid_publish_rejected_total":
		s.broker.rejected += v.counter()
	case "eventgrid_auth_failures_total":
		s.broker.authFailures += v.counter()
	}
}

// logTopics logs a "topic metrics" line per topic with activity.
func (c *Console) logTopics(topics map[string]*topicLine) {
	for _, name := range sortedKeys(topics) {
		t := topics[name]
		if t.received == 0 && t.unmatched == 0 && t.success == 0 && t.systemErrors == 0 && t.userErrors == 0 {
			continue
		}
		ev := c.log.Info().Str("topic", name).Int64("eventsReceived", int64(t.received)).
			Int64("unmatchedEvents", int64(t.unmatched)).Int64("successRequests", int64(t.success)).
			Int64("userErrorRequests", int64(t.userErrors)).Int64("systemErrorRequests", int64(t.systemErrors))
		if t.latency.count > 0 {
			ev = ev.Float64("successRequestLatencyMsMean", t.latency.mean())
		}
		ev.Msg("topic metrics")
	}
}

// logSubscriptions logs a "subscription metrics" line per subscription with
// activity or queued events, ordered by topic and name.
func (c *Console) logSubscriptions(subs map[subKey]*subLine) {
	keys := make([]subKey, 0, len(subs))
	for k := range subs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b subKey) int {
		if c := strings.Compare(a.topic, b.topic); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	for _, k := range keys {
		s := subs[k]
		if !s.active() {
			continue
		}
		ev := c.log.Info().Str("topic", k.topic).Str("subscription", k.name).
			Int64("deliverySuccessCounts", int64(s.delivered)).Int64("deliveryFailureCounts", int64(s.failed)).
			Int64("deliveryAttemptsCount", int64(s.attempts)).Int64("expiredCounts", int64(s.expired))
		for _, h := range []struct {
			field string
			h     hist
		}{
			{"deliverySuccessLatencyMsMean", s.successLat},
			{"deliveryFailureLatencyMsMean", s.failureLat},
			{"systemDelayForFirstAttemptMsMean", s.firstAttempt},
		} {
			if h.h.count > 0 {
				ev = ev.Float64(h.field, h.h.mean())
			}
		}
		for _, d := range []struct {
			field string
			m     map[string]float64
		}{{"dropped", s.dropped}, {"deadLettered", s.deadLettered}, {"settled", s.settled}, {"actions", s.actions}} {
			if len(d.m) > 0 {
				ev = ev.Dict(d.field, dictOf(d.m))
			}
		}
		if s.evicted != 0 {
			ev = ev.Int64("givenUpEvicted", int64(s.evicted))
		}
		if s.paused != 0 {
			ev = ev.Bool("paused", true)
		}
		if s.queue {
			ev.Int64("locksExpired", int64(s.locksExpired)).Int64("queueAvailable", int64(s.available)).
				Int64("queueLocked", int64(s.locked)).Int64("queueDelayed", int64(s.delayed)).Msg("subscription metrics")
			continue
		}
		ev.Int64("queueReady", int64(s.ready)).Int64("queueBackoff1", int64(s.backoff1)).
			Int64("queueBackoff2", int64(s.backoff2)).Msg("subscription metrics")
	}
}

// dictOf is m as a log dictionary, in the order of its keys.
func dictOf(m map[string]float64) *zerolog.Event {
	d := zerolog.Dict()
	for _, k := range sortedKeys(m) {
		d = d.Int64(k, int64(m[k]))
	}
	return d
}

// logBroker logs the "broker metrics" line.
func (c *Console) logBroker(b brokerLine) {
	c.log.Info().Int64("queuedEvents", int64(b.queuedEvents)).Int64("queuedBytes", int64(b.queuedBytes)).
		Int64("deliveriesInFlight", int64(b.inFlight)).Int64("backoffQueue1", int64(b.backoff1)).
		Int64("backoffQueue2", int64(b.backoff2)).Int64("publishRejected", int64(b.rejected)).
		Int64("authFailures", int64(b.authFailures)).Msg("broker metrics")
}

// label returns the value of the metric's label name, or "".
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// seriesKey identifies a series across reports.
func seriesKey(name string, m *dto.Metric) string {
	var sb strings.Builder
	sb.WriteString(name)
	for _, l := range m.GetLabel() {
		sb.WriteByte(0)
		sb.WriteString(l.GetName())
		sb.WriteByte('=')
		sb.WriteString(l.GetValue())
	}
	return sb.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
