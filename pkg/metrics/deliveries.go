package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// subSeries are the series of one subscription: those both delivery modes
// have, and those of its own mode, which the other mode's are nil.
type subSeries struct {
	topic, name                          string
	queue                                bool
	delivered, failed, attempts, expired prometheus.Counter
	dropped                              map[outcome.Reason]prometheus.Counter
	evicted                              prometheus.Counter
	// Push only: the requests' latencies and the delay of first attempts.
	successLatency, failureLatency, firstAttempt prometheus.Observer
	// Queue only: settlements by kind, and expired locks.
	settled     map[string]prometheus.Counter
	lockExpired prometheus.Counter
}

// settlements are the kinds of a queue subscription's settlements, whose
// series it starts with.
var settlements = [...]string{queue.SettleAcknowledge, queue.SettleRelease, queue.SettleReject, queue.SettleRenewLock}

// Record implements outcome.Metrics: a record moves the series of its
// subscription (docs/metrics.md).
func (p *Prometheus) Record(r outcome.Record) {
	s := p.sub(r.Sub)
	if s == nil {
		return
	}
	switch r.Kind {
	case outcome.Started:
		s.attempts.Add(float64(r.Events))
		if s.firstAttempt != nil {
			for _, d := range r.FirstDelays {
				s.firstAttempt.Observe(ms(d))
			}
		}
	case outcome.Attempted:
		s.attempted(&r)
	case outcome.Settled:
		p.add(s.settled[r.Settlement], p.settled, r.Sub, r.Events, r.Settlement)
	case outcome.GaveUp:
		if r.DeadLettered {
			p.addSub(p.deadLettered, r.Sub, 1, string(r.Reason))
			return
		}
		p.add(s.dropped[r.Reason], p.dropped, r.Sub, 1, string(r.Reason))
		if r.Reason.ByRetryPolicy() {
			s.expired.Inc()
		}
	case outcome.Discarded:
		if r.Events > 0 {
			p.add(s.dropped[r.Reason], p.dropped, r.Sub, r.Events, string(r.Reason))
		}
	case outcome.Evicted:
		s.evicted.Add(float64(r.Events))
	}
}

// attempted counts the end of an attempt: its delivered and failed events,
// its request's latency when it made one, and a queue's expired locks.
func (s *subSeries) attempted(r *outcome.Record) {
	delivered := r.Events - r.Failed
	if delivered > 0 {
		s.delivered.Add(float64(delivered))
		if r.Latency >= 0 && s.successLatency != nil {
			s.successLatency.Observe(ms(r.Latency))
		}
	}
	if r.Failed > 0 {
		s.failed.Add(float64(r.Failed))
		if r.Latency >= 0 && s.failureLatency != nil {
			s.failureLatency.Observe(ms(r.Latency))
		}
	}
	if r.Expired > 0 && s.lockExpired != nil {
		s.lockExpired.Add(float64(r.Expired))
	}
}

// add adds n to c, the subscription's counter of label, or when it has
// none yet, to its series of vec with that label.
func (p *Prometheus) add(c prometheus.Counter, vec *prometheus.CounterVec, sub *eventgrid.EventSubscription, n int, label string) {
	if c != nil {
		c.Add(float64(n))
		return
	}
	p.addSub(vec, sub, float64(n), label)
}

// sub returns the series of a subscription, or nil if they must not be
// kept: Prometheus observes subscriptions and this one does not exist.
func (p *Prometheus) sub(sub *eventgrid.EventSubscription) *subSeries {
	p.mu.RLock()
	s, ok := p.subs[sub.UID]
	observed := p.observed
	p.mu.RUnlock()
	if ok || observed {
		return s
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.subs[sub.UID]; ok || p.observed {
		return s
	}
	s = p.newSubSeriesLocked(sub)
	p.subs[sub.UID] = s
	return s
}

func (p *Prometheus) newSubSeriesLocked(sub *eventgrid.EventSubscription) *subSeries {
	topic, name := sub.Topic, sub.Name
	s := &subSeries{
		topic:     topic,
		name:      name,
		queue:     sub.IsQueue(),
		delivered: p.delivered.WithLabelValues(topic, name),
		failed:    p.failed.WithLabelValues(topic, name),
		attempts:  p.attempts.WithLabelValues(topic, name),
		expired:   p.expired.WithLabelValues(topic, name),
		evicted:   p.evicted.WithLabelValues(topic, name),
		dropped:   map[outcome.Reason]prometheus.Counter{},
	}
	reasons := outcome.PushReasons
	if s.queue {
		reasons = outcome.QueueReasons
		s.settled = make(map[string]prometheus.Counter, len(settlements))
		for _, k := range settlements {
			s.settled[k] = p.settled.WithLabelValues(topic, name, k)
		}
		s.lockExpired = p.lockExpired.WithLabelValues(topic, name)
	} else {
		s.successLatency = p.successLatency.WithLabelValues(topic, name)
		s.failureLatency = p.failureLatency.WithLabelValues(topic, name)
		s.firstAttempt = p.firstAttempt.WithLabelValues(topic, name)
	}
	for _, r := range reasons {
		s.dropped[r] = p.dropped.WithLabelValues(topic, name, string(r))
	}
	return s
}

func (p *Prometheus) deleteSubSeriesLocked(topic, name string) {
	for _, v := range []*prometheus.CounterVec{p.delivered, p.failed, p.attempts, p.expired, p.lockExpired, p.evicted} {
		v.DeleteLabelValues(topic, name)
	}
	for _, v := range []*prometheus.HistogramVec{p.successLatency, p.failureLatency, p.firstAttempt} {
		v.DeleteLabelValues(topic, name)
	}
	match := prometheus.Labels{labelTopic: topic, labelSubscription: name}
	for _, v := range []*prometheus.CounterVec{p.dropped, p.settled, p.deadLettered, p.deadLetterWritten, p.deadLetterFailed, p.deadLetterDropped,
		p.actions, p.actionEvents} {
		v.DeletePartialMatch(match)
	}
}
