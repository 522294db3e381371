package main

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Scenario l: a crowd of subscriptions at one slow receiver. One topic has
// crowdSubs subscriptions, every one to the same receiver (a path each),
// in batches of crowdBatch; crowdSubs events are published in one request,
// so each subscription gets 7 delivery requests, 707 in all, at once. The
// receiver is what Python's http.server is by default: a listen backlog of
// 5, a connection accepted at a time, and requests handled one at a time
// (its interpreter lock). When the broker dials many connections at once,
// the accept queue overflows and the SYNs it drops are sent again a second
// later; a sender that binds a request to its own dial waits that out.
// The scenario reports the connections the receiver accepted and the time
// from the publish until every delivery arrived.
const (
	crowdSubs    = 101
	crowdBatch   = 16
	crowdBacklog = 5
	// crowdAccept is how long the receiver takes to take on a connection
	// it accepted (Python starts a thread for it), crowdWork how long it
	// holds its lock for a request.
	crowdAccept = 200 * time.Microsecond
	crowdWork   = 300 * time.Microsecond
	// crowdSettle is how long after the last delivery the connections are
	// counted again: dials whose SYNs were dropped complete a second or
	// three after they started.
	crowdSettle = 3 * time.Second
)

// slowListener is a listener with a listen backlog of crowdBacklog that
// takes crowdAccept over each connection it accepts, holding gil as the
// requests do (Python's accept loop needs its interpreter lock too, so
// it accepts the more slowly the more requests are being handled), and
// counts the connections accepted and open.
type slowListener struct {
	net.Listener
	gil                  *sync.Mutex
	accepted, open, peak atomic.Int64
}

func listenSlowly(gil *sync.Mutex) (*slowListener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		ln.Close()
		return nil, err
	}
	var lerr error
	// listen(2) again on a listening socket sets its backlog.
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), crowdBacklog) }); err != nil || lerr != nil {
		ln.Close()
		return nil, fmt.Errorf("setting the listen backlog: %v %v", err, lerr)
	}
	return &slowListener{Listener: ln, gil: gil}, nil
}

func (l *slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
		holdFor(l.gil, crowdAccept)
	}
	return c, err
}

// connState counts the connections open, and the most open at once.
func (l *slowListener) connState(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		n := l.open.Add(1)
		for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
		}
	case http.StateClosed, http.StateHijacked:
		l.open.Add(-1)
	}
}

// holdFor holds mu for d, busy: the receiver's work.
func holdFor(mu *sync.Mutex, d time.Duration) {
	mu.Lock()
	for t0 := time.Now(); time.Since(t0) < d; {
	}
	mu.Unlock()
}

// oneAtATime handles the requests to h one at a time, each holding gil
// for crowdWork.
func oneAtATime(h http.Handler, gil *sync.Mutex) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		holdFor(gil, crowdWork)
		h.ServeHTTP(w, r)
	})
}

// newCrowdSink starts the slow receiver of l.
func newCrowdSink() (*sink, *slowListener, error) {
	gil := &sync.Mutex{}
	ln, err := listenSlowly(gil)
	if err != nil {
		return nil, nil, err
	}
	sk := newRecorder(crowdSubs, -1)
	sk.ln = ln
	sk.srv = &http.Server{Handler: oneAtATime(sk, gil), ReadHeaderTimeout: 10 * time.Second, ConnState: ln.connState}
	go func() { _ = sk.srv.Serve(ln) }()
	return sk, ln, nil
}

func (s *settings) scenarioL() (r result, err error) {
	r = result{Scenario: "l", Title: fmt.Sprintf("%d subscriptions of one receiver with a listen backlog of %d, %d events in one request",
		crowdSubs, crowdBacklog, crowdSubs), Subscriptions: crowdSubs, PublishBatch: crowdSubs, DeliveryBatch: crowdBatch}
	if s.crowdWait <= 0 {
		return r, fmt.Errorf("-crowd-wait must be positive")
	}
	b, err := s.startBroker(&r, nil)
	if err != nil {
		return r, err
	}
	defer stopBroker(&r, b)
	sk, ln, err := newCrowdSink()
	if err != nil {
		return r, err
	}
	defer sk.close()
	mgmt := &http.Client{Timeout: 10 * time.Second}
	if err := b.createTopic(mgmt, topic); err != nil {
		return r, err
	}
	for i := range crowdSubs {
		if err := b.subscribe(mgmt, topic, fmt.Sprintf("s%d", i), sk.endpoint(i), crowdBatch); err != nil {
			return r, err
		}
	}
	pub := newPublisher(b.url, topic, s.size, 1)
	defer pub.close()
	m, err := startMeter(b, "l", s.perfDir)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	var seq atomic.Int64
	r.Publish = pub.run(closedLoop{publishers: 1, batch: crowdSubs, total: crowdSubs, retry503: true, giveUp: s.drain}, &seq)
	all := span(0, crowdSubs)
	r.Expected = r.Publish.Accepted * crowdSubs
	if !sk.wait(all, r.Expected, s.crowdWait) {
		r.note("deliveries stopped short of the events published (nothing arrived for %v)", s.crowdWait)
	}
	rec := sk.total(all, true)
	if err := r.finish(m, b, t0, rec.events, rec.last, rec.lat); err != nil {
		return r, err
	}
	s.crowdFigures(&r, ln, rec)
	return r, nil
}

// crowdFigures notes l's connections and how many deliveries arrived
// within a second, and judges it.
func (s *settings) crowdFigures(r *result, ln *slowListener, rec received) {
	accepted := ln.accepted.Load()
	time.Sleep(crowdSettle) // the dials still in flight, if any, complete meanwhile
	settled := ln.accepted.Load()
	within := 0
	for _, l := range rec.lat {
		if l <= int64(time.Second) {
			within++
		}
	}
	r.detail("connections_accepted_by_last_delivery", accepted)
	r.detail("connections_accepted_3s_later", settled)
	r.detail("connections_open_at_most", ln.peak.Load())
	r.detail("delivery_requests", rec.requests)
	r.detail("events_delivered_within_1s", within)
	r.note("%d delivery requests; the receiver accepted %d connections by the last delivery (%d three seconds later, at most %d open at once); %d of %d events arrived within 1 s of their publish, the last %.2f s after it",
		rec.requests, accepted, settled, ln.peak.Load(), within, r.Expected, r.Seconds)
	r.judge("every event within 1 s", r.Expected > 0 && rec.events >= r.Expected && r.Seconds <= 1)
}
