package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Scenario h: delivery to a faulty sink. chaosSubs subscriptions on one
// topic, every other one batched, get -chaos-events events published in
// requests of 100, with back-off intervals of 1 s and 2 s. It runs once
// fault-free (h0), then once per -chaos spec (h1, h2, …) on a fresh broker
// each time, and compares the time from the first publish to the last
// event delivered against h0's. The sink keeps every event id it accepted,
// per subscription, so the scenario counts lost and duplicated deliveries.

// chaosSpec is one faulty run: the fraction of requests that fail, the
// kinds of failure, broker__deliverTimeoutInSeconds, and the most times
// slower than fault-free the run may be (0: no target).
type chaosSpec struct {
	rate    float64
	kinds   []string
	timeout int
	target  float64
}

// The fault kinds the sink knows: an answer with that status (429 with
// Retry-After: 1), a dropped connection, or no answer before the broker's
// delivery timeout.
var faultKinds = [...]string{"500", "408", "drop", "late", "503", "429"}

// Shorthands for sets of fault kinds.
var faultSets = map[string][]string{
	"neutral": {"500", "408", "drop", "late"}, // say nothing about load
	"all":     faultKinds[:],
}

// defaultChaos are the faulty runs h makes unless -chaos says otherwise.
var defaultChaos = []string{"0.3:neutral:1:5", "0.3:all:1:6", "0.01:late:5:3"}

// parseChaos reads RATE:KINDS:TIMEOUT[:TARGET], KINDS a comma-separated
// list of fault kinds or "neutral" or "all".
func parseChaos(v string) (chaosSpec, error) {
	f := strings.Split(v, ":")
	if len(f) < 3 || len(f) > 4 {
		return chaosSpec{}, fmt.Errorf("want RATE:KINDS:TIMEOUT[:TARGET], got %q", v)
	}
	var c chaosSpec
	var err error
	if c.rate, err = strconv.ParseFloat(f[0], 64); err != nil || c.rate <= 0 || c.rate > 1 {
		return c, fmt.Errorf("fault rate %q: want a fraction in (0, 1]", f[0])
	}
	for _, k := range strings.Split(f[1], ",") {
		if set, ok := faultSets[k]; ok {
			c.kinds = append(c.kinds, set...)
			continue
		}
		if !isFaultKind(k) {
			return c, fmt.Errorf("fault kind %q: want one of %s, neutral or all", k, strings.Join(faultKinds[:], ", "))
		}
		c.kinds = append(c.kinds, k)
	}
	if c.timeout, err = strconv.Atoi(f[2]); err != nil || c.timeout < 1 {
		return c, fmt.Errorf("timeout %q: want whole seconds, at least 1", f[2])
	}
	if len(f) == 4 {
		if c.target, err = strconv.ParseFloat(f[3], 64); err != nil || c.target <= 0 {
			return c, fmt.Errorf("target %q: want a positive factor", f[3])
		}
	}
	return c, nil
}

func isFaultKind(k string) bool {
	for _, f := range faultKinds {
		if k == f {
			return true
		}
	}
	return false
}

func (c chaosSpec) String() string {
	return fmt.Sprintf("%g%% of requests fail (%s), delivery timeout %d s", 100*c.rate, strings.Join(c.kinds, ", "), c.timeout)
}

// chaosFlag collects repeated -chaos flags.
type chaosFlag []chaosSpec

func (c *chaosFlag) String() string { return fmt.Sprint(len(*c), " specs") }

func (c *chaosFlag) Set(v string) error {
	spec, err := parseChaos(v)
	if err != nil {
		return err
	}
	*c = append(*c, spec)
	return nil
}

// chaosSettings are the shape of scenario h.
type chaosSettings struct {
	specs  chaosFlag
	events int64
	subs   int
	batch  int
	seed   uint64
}

// scenarioH runs h0 and the faulty runs.
func (s *settings) scenarioH() []result {
	specs := s.chaos.specs
	if len(specs) == 0 {
		for _, v := range defaultChaos {
			spec, _ := parseChaos(v)
			specs = append(specs, spec)
		}
	}
	fmt.Fprintln(os.Stderr, "scenario h0…")
	base, err := s.runChaos("h0", chaosSpec{timeout: 1})
	if err != nil {
		base.Error = err.Error()
	}
	out := []result{base}
	for i, spec := range specs {
		name := fmt.Sprint("h", i+1)
		fmt.Fprintf(os.Stderr, "scenario %s…\n", name)
		r, err := s.runChaos(name, spec)
		if err != nil {
			r.Error = err.Error()
		}
		if base.Seconds > 0 && r.Seconds > 0 {
			ratio := r.Seconds / base.Seconds
			r.detail("times_fault_free", ratio)
			r.note("%.1f s vs %.1f s fault-free: %.2fx", r.Seconds, base.Seconds, ratio)
			if lp, ok := r.Details["last_pair_first_failed_held_schedule_slack_seconds"].([]float64); ok {
				// What the last pair's own failures cost whatever the
				// broker does: the time its failed attempts were held and
				// the back-off the schedule asks for after them. The rest
				// is the broker's: its first attempt and its retries'
				// lateness.
				rest := r.Seconds - lp[2] - lp[3]
				r.detail("seconds_beyond_last_pair_failures", rest)
				r.note("beyond what the last pair's failures cost by the schedule and the timeout: %.1f s, %.2fx fault-free",
					rest, rest/base.Seconds)
			}
			if spec.target > 0 && r.Error == "" {
				r.judge(fmt.Sprintf("<= %gx fault-free, none lost or duplicated", spec.target),
					ratio <= spec.target && r.Received == r.Expected && duplicatesOf(r) == 0)
			}
		}
		out = append(out, r)
	}
	return out
}

func duplicatesOf(r result) int64 {
	n, _ := r.Details["duplicated_deliveries"].(int64)
	return n
}

// runChaos runs one delivery to the faulty sink on a fresh broker.
func (s *settings) runChaos(name string, spec chaosSpec) (r result, err error) {
	c := s.chaos
	title := "fault-free"
	if spec.rate > 0 {
		title = spec.String()
	}
	r = result{Scenario: name, Title: fmt.Sprintf("%d subscriptions (every other batched by %d), %d events: %s", c.subs, c.batch, c.events, title),
		Subscriptions: c.subs, PublishBatch: 100, DeliveryBatch: c.batch}
	total := amount(c.events, 100)
	room := fmt.Sprint(total*int64(c.subs) + 100000)
	b, err := s.startBroker(&r, map[string]string{
		"broker__backoffIntervals":               fmt.Sprintf("%v,%v", chaosBackoff[0], chaosBackoff[1]),
		"broker__deliverTimeoutInSeconds":        fmt.Sprint(spec.timeout),
		"broker__maxQueuedEvents":                room,
		"broker__maxQueuedEventsPerSubscription": fmt.Sprint(total + 100000),
		"broker__maxQueuedBytesPerSubscription":  "268435456",
	})
	if err != nil {
		return r, err
	}
	defer stopBroker(&r, b)
	sk, err := newFaultySink(c.subs, total, spec, time.Duration(spec.timeout+1)*time.Second, c.seed)
	if err != nil {
		return r, err
	}
	defer sk.close()
	mgmt := &http.Client{Timeout: 10 * time.Second}
	if err := b.createTopic(mgmt, topic); err != nil {
		return r, err
	}
	for i := range c.subs {
		batch := 0
		if i%2 == 1 {
			batch = c.batch
		}
		if err := b.subscribe(mgmt, topic, fmt.Sprintf("s%d", i), sk.endpoint(i), batch); err != nil {
			return r, err
		}
	}
	pub := newPublisher(b.url, topic, s.size, s.publishers)
	defer pub.close()
	m, err := startMeter(b, name, s.perfDir)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	watch := watchConcurrency(mgmt, b.url)
	var seq atomic.Int64
	r.Publish = pub.run(closedLoop{publishers: s.publishers, batch: 100, total: total, retry503: true, giveUp: s.drain}, &seq)
	r.Expected = r.Publish.Accepted * int64(c.subs)
	if !sk.wait(r.Expected, s.drain) {
		r.note("deliveries stopped short of the events published (nothing new arrived for %v)", s.drain)
		var list []json.RawMessage
		if getJSON(mgmt, b.url+"/topics/"+topic+"/eventSubscriptions"+apiVersion, &list) == nil {
			for _, v := range list {
				r.note("left: %s", v)
			}
		}
	}
	conc := watch()
	r.detail("mean_concurrency_limit_unbatched_batched", conc.limit)
	r.detail("mean_in_flight_unbatched_batched", conc.inFlight)
	r.note("while events were left: mean concurrencyLimit %.1f unbatched, %.1f batched; mean inFlight %.1f and %.1f",
		conc.limit[0], conc.limit[1], conc.inFlight[0], conc.inFlight[1])
	got := sk.tally()
	if err := r.finish(m, b, t0, got.distinct, got.last, got.lat); err != nil {
		return r, err
	}
	if len(got.at) > 0 {
		slices.Sort(got.at)
		share := func(p float64) float64 {
			return float64(percentile(got.at, p)-t0.UnixNano()) / 1e9
		}
		r.detail("seconds_to_50_90_99_percent", []float64{share(50), share(90), share(99)})
		r.note("50%% of the pairs delivered after %.1f s, 90%% after %.1f s, 99%% after %.1f s", share(50), share(90), share(99))
	}
	if got.maxFails > 0 {
		// An event that failed n times waited this long for its retries
		// whatever the broker did.
		floor := int(backoffOver(got.maxFails).Seconds())
		r.detail("most_failed_attempts_of_one_pair", got.maxFails)
		r.detail("retry_schedule_floor_seconds", floor)
		r.note("the unluckiest (event, subscription) pair failed %d times: %d s of back-off by the schedule alone",
			got.maxFails, floor)
	}
	if lp := got.lastPair; lp.done > 0 {
		first, held, sched, slack := float64(lp.first-t0.UnixNano())/1e9, float64(lp.held)/1e9,
			backoffOver(got.lastFails).Seconds(), float64(lp.slack)/1e9
		r.detail("last_pair_first_failed_held_schedule_slack_seconds", []float64{first, float64(got.lastFails), held, sched, slack})
		r.note("the last pair delivered: first attempt after %.1f s, %d failed attempts holding %.1f s, %.0f s of back-off, %.1f s later than the schedule",
			first, got.lastFails, held, sched, slack)
	}
	if got.retries > 0 {
		r.detail("retry_slack_mean_max_seconds", []float64{float64(got.slack) / float64(got.retries) / 1e9, float64(got.maxSlack) / 1e9})
		r.note("%d retries came on average %.0f ms later than the schedule; one pair's retries at most %.1f s in all",
			got.retries, float64(got.slack)/float64(got.retries)/1e6, float64(got.maxSlack)/1e9)
	}
	r.detail("duplicated_deliveries", got.dups)
	r.detail("unknown_events", got.unknown)
	r.detail("delivery_requests", got.requests)
	r.detail("faults", got.faults)
	lost := r.Expected - got.distinct
	r.note("%d of %d (event, subscription) pairs delivered: %d lost, %d duplicated; %d delivery requests, faults %v",
		got.distinct, r.Expected, lost, got.dups, got.requests, got.faults)
	if r.Publish.Rejected > 0 {
		r.note("%d publish requests got 503 and were retried", r.Publish.Rejected)
	}
	if spec.rate == 0 {
		r.judge("none lost or duplicated", lost == 0 && got.dups == 0)
	}
	return r, nil
}

// concurrency is the subscriptions' mean deliveryStatus while they had
// events left, unbatched ([0]) and batched ([1]).
type concurrency struct {
	limit, inFlight [2]float64
}

// watchConcurrency samples the subscriptions' deliveryStatus every 100 ms
// until the function it returns is called, which returns the means.
func watchConcurrency(c *http.Client, base string) func() concurrency {
	stop, done := make(chan struct{}), make(chan concurrency)
	go func() {
		var sum concurrency
		var n [2]float64
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				for k := range n {
					if n[k] > 0 {
						sum.limit[k] /= n[k]
						sum.inFlight[k] /= n[k]
					}
				}
				done <- sum
				return
			case <-t.C:
			}
			var list []struct {
				Name       string
				Properties struct {
					DeliveryStatus struct{ Ready, InBackoff, InFlight, ConcurrencyLimit int }
				}
			}
			if getJSON(c, base+"/topics/"+topic+"/eventSubscriptions"+apiVersion, &list) != nil {
				continue
			}
			for _, v := range list {
				st := v.Properties.DeliveryStatus
				if st.Ready+st.InBackoff+st.InFlight == 0 {
					continue
				}
				k := 0
				if i, err := strconv.Atoi(strings.TrimPrefix(v.Name, "s")); err == nil && i%2 == 1 {
					k = 1
				}
				sum.limit[k] += float64(st.ConcurrencyLimit)
				sum.inFlight[k] += float64(st.InFlight)
				n[k]++
			}
		}
	}()
	return func() concurrency { close(stop); return <-done }
}

// getJSON decodes the JSON answer to a GET.
func getJSON(c *http.Client, url string, v any) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
