package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// faultySink is scenario h's webhook subscriber: it fails a fraction of
// the delivery requests, each with a kind of fault drawn at random (from a
// seeded generator, so runs are alike), and answers 200 to the rest, whose
// events it records by id, per subscription (path /c/<i>). An event counts
// as delivered only from a request answered 200: a request that failed
// delivered nothing, whatever it carried.
type faultySink struct {
	srv     *http.Server
	ln      net.Listener
	spec    chaosSpec
	late    time.Duration // how long a "late" request is held at most
	release chan struct{} // closed by close: held requests return
	subs    []*chaosSub

	rngMu sync.Mutex
	rng   *rand.Rand

	requests atomic.Int64
	faults   [len(faultKinds)]atomic.Int64
	last     atomic.Int64 // Unix ns of the last new delivery
}

// chaosSub is what one subscription received.
type chaosSub struct {
	mu       sync.Mutex
	seen     []bool  // by event id
	fails    []uint8 // failed attempts, by event id
	pairs    []pairTimes
	distinct int64
	dups     int64
	unknown  int64
	lat      []int64
	at       []int64 // Unix ns of each event's first delivery
}

func newChaosSub(events int64) *chaosSub {
	return &chaosSub{seen: make([]bool, events), fails: make([]uint8, events), pairs: make([]pairTimes, events)}
}

func newFaultySink(subs int, events int64, spec chaosSpec, late time.Duration, seed uint64) (*faultySink, error) {
	k := &faultySink{spec: spec, late: late, release: make(chan struct{}),
		rng: rand.New(rand.NewPCG(seed, 0x6564676567726964))}
	for range subs {
		k.subs = append(k.subs, newChaosSub(events))
	}
	var err error
	k.srv, k.ln, err = serveLoopback(k)
	return k, err
}

func (k *faultySink) endpoint(i int) string {
	return "http://" + k.ln.Addr().String() + "/c/" + strconv.Itoa(i)
}

func (k *faultySink) close() {
	close(k.release)
	_ = k.srv.Close()
}

// fault draws the fate of one request: "" to answer 200, or a fault kind.
func (k *faultySink) fault() string {
	if k.spec.rate == 0 {
		return ""
	}
	k.rngMu.Lock()
	defer k.rngMu.Unlock()
	if k.rng.Float64() >= k.spec.rate {
		return ""
	}
	return k.spec.kinds[k.rng.IntN(len(k.spec.kinds))]
}

func (k *faultySink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/c/"))
	if err != nil || i < 0 || i >= len(k.subs) {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	arrived := time.Now().UnixNano()
	k.requests.Add(1)
	kind := k.fault()
	if kind != "" {
		for j, f := range faultKinds {
			if f == kind {
				k.faults[j].Add(1)
			}
		}
	}
	if kind != "" {
		defer func() { k.subs[i].failed(body, arrived, time.Now().UnixNano()) }()
	}
	switch kind {
	case "":
		k.subs[i].record(body, arrived, &k.last)
		w.WriteHeader(http.StatusOK)
	case "429":
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	case "drop":
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
	case "late":
		// The broker gives up at its delivery timeout and closes the
		// request; the answer after that reaches nobody.
		select {
		case <-r.Context().Done():
		case <-k.release:
		case <-time.After(k.late):
		}
		w.WriteHeader(http.StatusOK)
	default:
		code, _ := strconv.Atoi(kind)
		w.WriteHeader(code)
	}
}

// idKey precedes each benchmark event's id.
var idKey = []byte(`"id":"`)

// eachID calls f with the id of every benchmark event in body, or -1 for
// an id that is not one.
func eachID(body []byte, f func(id int64)) {
	for rest := body; ; {
		j := bytes.Index(rest, idKey)
		if j < 0 {
			return
		}
		rest = rest[j+len(idKey):]
		n := 0
		id := int64(0)
		for n < len(rest) && n < idDigits && rest[n] >= '0' && rest[n] <= '9' {
			id = id*10 + int64(rest[n]-'0')
			n++
		}
		if n != idDigits {
			id = -1
		}
		f(id)
	}
}

// record notes the events of a delivery answered 200.
func (st *chaosSub) record(body []byte, now int64, last *atomic.Int64) {
	lat, _ := latencies(body, now, nil)
	st.mu.Lock()
	defer st.mu.Unlock()
	fresh := false
	eachID(body, func(id int64) {
		switch {
		case id < 0 || id >= int64(len(st.seen)):
			st.unknown++
		case st.seen[id]:
			st.dups++
		default:
			st.seen[id] = true
			st.distinct++
			st.at = append(st.at, now)
			st.pairs[id].attempt(st.fails[id], now)
			st.pairs[id].done = now
			fresh = true
		}
	})
	st.lat = append(st.lat, lat...)
	if fresh {
		last.Store(max(last.Load(), now))
	}
}

// failed counts a failed attempt for the events of a delivery, which
// arrived and ended (was answered, dropped, or given up by the broker) at
// the times given.
func (st *chaosSub) failed(body []byte, arrived, ended int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	eachID(body, func(id int64) {
		if id >= 0 && id < int64(len(st.fails)) && st.fails[id] < 255 {
			p := &st.pairs[id]
			p.attempt(st.fails[id], arrived)
			p.held += ended - arrived
			p.ended = ended
			st.fails[id]++
		}
	})
}

// pairTimes is where the time of one (event, subscription) pair went, in
// Unix ns: its first attempt, its delivery, the time its failed attempts
// took, and the slack: how much later than the back-off schedule says
// each retry came after the failed attempt before it ended.
type pairTimes struct {
	first, done, ended, held, slack int64
}

// attempt notes an attempt that arrived after fails failed ones.
func (p *pairTimes) attempt(fails uint8, arrived int64) {
	if fails == 0 {
		p.first = arrived
		return
	}
	p.slack += arrived - p.ended - int64(backoff(int(fails)))
}

// chaosBackoff are the back-off intervals scenario h runs the broker with.
var chaosBackoff = [2]time.Duration{time.Second, 2 * time.Second}

// backoff is the schedule's wait after the n-th failed attempt.
func backoff(n int) time.Duration {
	if n <= 1 {
		return chaosBackoff[0]
	}
	return chaosBackoff[1]
}

// backoffOver is the schedule's wait over n failed attempts in a row.
func backoffOver(n int) (d time.Duration) {
	for i := 1; i <= n; i++ {
		d += backoff(i)
	}
	return d
}

// chaosTally is what the sink received, over all subscriptions.
type chaosTally struct {
	distinct, dups, unknown, requests int64
	faults                            map[string]int64
	last                              int64
	lat                               []int64
	at                                []int64 // first deliveries, Unix ns
	maxFails                          int     // the most failed attempts of one event to one subscription
	lastPair                          pairTimes
	lastFails                         int
	retries                           int64 // attempts after a failed one
	slack                             int64 // their slack, summed
	maxSlack                          int64
}

func (k *faultySink) tally() chaosTally {
	t := chaosTally{requests: k.requests.Load(), last: k.last.Load(), faults: map[string]int64{}}
	for j, f := range faultKinds {
		if n := k.faults[j].Load(); n > 0 {
			t.faults[f] = n
		}
	}
	for _, st := range k.subs {
		st.mu.Lock()
		t.distinct += st.distinct
		t.dups += st.dups
		t.unknown += st.unknown
		t.lat = append(t.lat, st.lat...)
		t.at = append(t.at, st.at...)
		for id, n := range st.fails {
			t.maxFails = max(t.maxFails, int(n))
			p := st.pairs[id]
			if p.done > t.lastPair.done {
				t.lastPair, t.lastFails = p, int(n)
			}
			if n > 0 && p.done > 0 {
				t.retries += int64(n)
				t.slack += p.slack
				t.maxSlack = max(t.maxSlack, p.slack)
			}
		}
		st.mu.Unlock()
	}
	return t
}

// wait polls until want distinct pairs have arrived, or nothing new has
// for idle. It reports whether want was reached.
func (k *faultySink) wait(want int64, idle time.Duration) bool {
	return waitCount(want, idle, func() int64 {
		var got int64
		for _, st := range k.subs {
			st.mu.Lock()
			got += st.distinct
			st.mu.Unlock()
		}
		return got
	})
}
