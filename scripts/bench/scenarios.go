package main

import (
	"fmt"
	"maps"
	"net/http"
	"sync/atomic"
	"time"
)

// settings are the benchmark's knobs, from its flags.
type settings struct {
	bin          string
	size         int
	publishers   int
	duration     time.Duration
	events       int64 // a, b: events to publish instead of publishing for duration
	fanoutEvents int64 // c, d: events to publish
	rate         float64
	rateWorkers  int
	backlog      int
	overflow     int
	hangTimeout  int
	drain        time.Duration
	perfDir      string
	waitIdle     time.Duration
	retryBusy    int
	env          map[string]string // extra broker environment, for every scenario
	chaos        chaosSettings
	// consoleRounds is how many times i runs without and with the
	// console open.
	consoleRounds int
	// crowdWait is how long l waits with nothing arriving before it
	// gives up.
	crowdWait time.Duration
	// redriveEvents is how many events m gives up on and redrives.
	redriveEvents int64
}

// result is one scenario's figures.
type result struct {
	Scenario        string            `json:"scenario"`
	Title           string            `json:"title"`
	Subscriptions   int               `json:"subscriptions"`
	PublishBatch    int               `json:"events_per_publish_request"`
	DeliveryBatch   int               `json:"max_events_per_delivery"` // 1: unbatched
	BrokerEnv       map[string]string `json:"broker_env"`
	Publish         publishStats      `json:"publish"`
	Received        int64             `json:"received_events"`
	Expected        int64             `json:"expected_events"`
	Seconds         float64           `json:"seconds_first_publish_to_last_receive"`
	EventsPerSecond float64           `json:"events_per_second"`
	Latency         latencySummary    `json:"latency"`
	BrokerCPU       float64           `json:"broker_cpu_seconds"`
	CPUPer1000      float64           `json:"broker_cpu_seconds_per_1000_events"`
	BenchCPU        float64           `json:"bench_cpu_seconds"`
	OtherCores      float64           `json:"other_load_cores"`
	StealCores      float64           `json:"steal_cores"`
	RSS             int64             `json:"broker_rss_bytes"`
	PeakRSS         int64             `json:"broker_peak_rss_bytes"`
	Target          string            `json:"target,omitempty"`
	Met             *bool             `json:"target_met,omitempty"`
	Details         map[string]any    `json:"details,omitempty"`
	Notes           []string          `json:"notes,omitempty"`
	Error           string            `json:"error,omitempty"`
}

func (r *result) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

func (r *result) detail(k string, v any) {
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	r.Details[k] = v
}

func (r *result) judge(target string, met bool) {
	r.Target, r.Met = target, &met
}

// finish takes the meter's closing figures over events received, the last
// at last (Unix ns), and the throughput and latency from t0 on. It fails
// if the broker died.
func (r *result) finish(m *meter, b *broker, t0 time.Time, events, last int64, lat []int64) error {
	if err := m.finish(r, events); err != nil {
		return err
	}
	if !b.alive() {
		return fmt.Errorf("the broker died during the run\n%s", b.output())
	}
	r.Received = events
	if last > 0 {
		r.Seconds = float64(last-t0.UnixNano()) / 1e9
		r.EventsPerSecond = float64(events) / r.Seconds
	}
	r.Latency = summarize(lat)
	return nil
}

// startBroker starts a broker with the base environment, then env, then the
// -env flags, and records the environment in r.
func (s *settings) startBroker(r *result, env map[string]string) (*broker, error) {
	e := baseEnv()
	maps.Copy(e, env)
	maps.Copy(e, s.env)
	r.BrokerEnv = e
	return startBroker(s.bin, e)
}

// stopBroker stops b and notes a failure to stop cleanly.
func stopBroker(r *result, b *broker) {
	if err := b.stop(30 * time.Second); err != nil {
		r.note("stopping the broker: %v", err)
	}
}

const topic = "bench"

// flow is a throughput scenario: closed-loop publishers, a sink that
// answers (except possibly one subscription), everything delivered.
type flow struct {
	name, title   string
	subs          int
	hang          int // subscription that never answers, or -1
	publishBatch  int
	deliveryBatch int // 0: unbatched
	total         int64
	env           map[string]string
	measure       []int  // subscriptions whose deliveries are counted
	extra         []int  // subscriptions 1-9 of c, reported in details
	watch         bool   // the console is open on the topic and s0 (console.go)
	relay         bool   // run the bare relay instead of the broker
	schema        string // the subscriptions' eventDeliverySchema, if not the topic's
}

// startTarget starts what f measures: the broker, or the bare relay.
func (s *settings) startTarget(r *result, f flow) (*broker, error) {
	if !f.relay {
		return s.startBroker(r, f.env)
	}
	bin, err := relayBinary()
	if err != nil {
		return nil, err
	}
	r.BrokerEnv = map[string]string{relayEnv: "1", "GODEBUG": "gctrace=1"}
	return startBroker(bin, r.BrokerEnv)
}

// runFlow runs a throughput scenario on a fresh broker.
func (s *settings) runFlow(f flow) (r result, err error) {
	r = result{Scenario: f.name, Title: f.title, Subscriptions: f.subs, PublishBatch: f.publishBatch,
		DeliveryBatch: max(f.deliveryBatch, 1)}
	b, err := s.startTarget(&r, f)
	if err != nil {
		return r, err
	}
	defer stopBroker(&r, b)
	// Closed before the broker is stopped, so that no delivery hangs on.
	sk, err := newSink(f.subs, f.hang)
	if err != nil {
		return r, err
	}
	defer sk.close()
	mgmt := &http.Client{Timeout: 10 * time.Second}
	if err := b.createTopic(mgmt, topic); err != nil {
		return r, err
	}
	for i := range f.subs {
		if err := b.subscribeIn(mgmt, topic, fmt.Sprintf("s%d", i), sk.endpoint(i), f.deliveryBatch, f.schema); err != nil {
			return r, err
		}
	}
	pub := newPublisher(b.url, topic, s.size, s.publishers)
	defer pub.close()
	if f.watch {
		v, err := startViewer(b.url, topic, "s0")
		if err != nil {
			return r, err
		}
		defer v.report(&r)
		defer v.close()
	}

	m, err := startMeter(b, f.name, s.perfDir)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	var seq atomic.Int64
	r.Publish = pub.run(closedLoop{
		publishers: s.publishers, batch: f.publishBatch, total: f.total,
		deadline: t0.Add(s.duration), retry503: true, giveUp: s.drain,
	}, &seq)
	publishSeconds := time.Since(t0).Seconds()
	r.Expected = r.Publish.Accepted * int64(len(f.measure))
	if !sk.wait(f.measure, r.Expected, s.drain) {
		r.note("deliveries stopped short of the events published (nothing arrived for %v)", s.drain)
	}
	rec := sk.total(f.measure, true)
	if err := r.finish(m, b, t0, rec.events, rec.last, rec.lat); err != nil {
		return r, err
	}
	r.detail("published_events_per_second", float64(r.Publish.Accepted)/publishSeconds)
	if f.subs > 1 {
		r.note("%d events published at %.0f events/s, each delivered to %d subscriptions (%d measured)",
			r.Publish.Accepted, float64(r.Publish.Accepted)/publishSeconds, f.subs, len(f.measure))
	}
	r.detail("delivery_requests", rec.requests)
	if rec.unstamped > 0 {
		r.note("%d delivered events had no readable publish time", rec.unstamped)
	}
	if r.Publish.Rejected > 0 {
		r.note("%d publish requests got 503 (queue limit) and were retried", r.Publish.Rejected)
	}
	if r.Publish.Errors+r.Publish.OtherStatus > 0 {
		r.note("%d publish requests failed: %s", r.Publish.Errors+r.Publish.OtherStatus, r.Publish.FirstError)
	}
	if len(f.extra) > 0 {
		x := sk.total(f.extra, false)
		if x.last > 0 {
			r.detail("subscriptions_1_to_9_events", x.events)
			r.detail("subscriptions_1_to_9_events_per_second", float64(x.events)/(float64(x.last-t0.UnixNano())/1e9))
		}
	}
	if f.hang >= 0 {
		r.detail("hung_delivery_requests", sk.hung.Load())
	}
	return r, nil
}

// amount returns the total for a closed loop of batch-event requests: n
// rounded up to whole requests, or 0 (publish for -duration) when n is 0.
func amount(n int64, batch int) int64 {
	k := int64(batch)
	return (n + k - 1) / k * k
}

func (s *settings) scenarioA() (result, error) {
	r, err := s.runFlow(flow{name: "a", title: "single-event publish, unbatched delivery, 1 subscription",
		subs: 1, hang: -1, publishBatch: 1, total: amount(s.events, 1), measure: []int{0}})
	r.judge(">= 10,000 events/s", r.EventsPerSecond >= 10000)
	return r, err
}

// scenarioAR is a through the bare relay.
func (s *settings) scenarioAR() (result, error) {
	return s.runFlow(flow{name: "ar", title: "a through a bare Go relay (one request in, one out)",
		subs: 1, hang: -1, publishBatch: 1, total: amount(s.events, 1), measure: []int{0}, relay: true})
}

// scenarioBR is b through the bare relay.
func (s *settings) scenarioBR() (result, error) {
	return s.runFlow(flow{name: "br", title: "b through a bare Go relay (one request in, two of 50 out)",
		subs: 1, hang: -1, publishBatch: 100, deliveryBatch: 50, total: amount(s.events, 100), measure: []int{0}, relay: true})
}

func (s *settings) scenarioB() (result, error) {
	r, err := s.runFlow(flow{name: "b", title: "100-event publish, delivery batches of 50, 1 subscription",
		subs: 1, hang: -1, publishBatch: 100, deliveryBatch: 50, total: amount(s.events, 100), measure: []int{0}})
	r.judge(">= 100,000 events/s", r.EventsPerSecond >= 100000)
	return r, err
}

// scenarioBC is b with the subscription asking for CloudEvents, so that
// the broker converts every event as it does for g's queue subscription:
// against it, g/bc compares pull with push doing the same conversion.
func (s *settings) scenarioBC() (result, error) {
	return s.runFlow(flow{name: "bc", title: "b delivering CloudEvents (converted from EventGridSchema, as g's are)",
		subs: 1, hang: -1, publishBatch: 100, deliveryBatch: 50, total: amount(s.events, 100), measure: []int{0},
		schema: "CloudEventSchemaV1_0"})
}

// fanoutEnv is the broker environment of c and d. All ten subscriptions
// share one topic, so in d, once the hanging subscriber had filled its share
// of the queue budget, every publish would be refused for it: that is
// admission doing its job, not what d measures. Both scenarios get room for
// everything d's hanging subscriber can hold, per subscription and in all,
// so that d measures the delivery isolation alone.
func (s *settings) fanoutEnv() map[string]string {
	n := fmt.Sprint(amount(s.fanoutEvents, 100) + 100000)
	return map[string]string{
		"broker__maxQueuedEvents":                n,
		"broker__maxQueuedEventsPerSubscription": n,
		"broker__maxQueuedBytesPerSubscription":  "268435456",
	}
}

func (s *settings) scenarioC() (result, error) {
	return s.runFlow(flow{name: "c", title: "fan-out to 10 subscriptions (100-event publish, batches of 50)",
		subs: 10, hang: -1, publishBatch: 100, deliveryBatch: 50, total: amount(s.fanoutEvents, 100),
		env: s.fanoutEnv(), measure: span(0, 10), extra: span(1, 10)})
}

// scenarioD runs c with subscription 0 hanging; c9 is the throughput of
// subscriptions 1-9 in c, or 0 if c did not run.
func (s *settings) scenarioD(c9 float64) (result, error) {
	env := s.fanoutEnv()
	env["broker__deliverTimeoutInSeconds"] = fmt.Sprint(s.hangTimeout)
	r, err := s.runFlow(flow{name: "d", title: "c with 1 subscriber that never answers (9 healthy measured)",
		subs: 10, hang: 0, publishBatch: 100, deliveryBatch: 50, total: amount(s.fanoutEvents, 100),
		env: env, measure: span(1, 10)})
	if c9 > 0 && r.EventsPerSecond > 0 {
		loss := 1 - r.EventsPerSecond/c9
		r.detail("healthy9_events_per_second_in_c", c9)
		r.detail("healthy9_loss_vs_c", loss)
		r.note("healthy nine: %.0f events/s vs %.0f in c: %+.1f%%", r.EventsPerSecond, c9, -100*loss)
		r.judge("healthy nine lose < 10% vs c", loss < 0.10)
	} else {
		r.note("run scenario c in the same invocation to compare the healthy nine against it")
	}
	return r, err
}
