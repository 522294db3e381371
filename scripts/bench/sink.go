package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sink is the webhook subscriber: an HTTP server on a loopback port, in this
// process, that answers 200 to every delivery and records, per subscription
// (the path /s/<i>), how many events arrived, when, and their latency from
// the publish time each event carries. The subscription numbered hang never
// answers: its requests wait until the broker gives up on them.
type sink struct {
	srv     *http.Server
	ln      net.Listener
	subs    []*subStats
	hang    int
	release chan struct{} // closed by close: hanging requests return
	hung    atomic.Int64  // requests held by the hanging subscription
	scratch sync.Pool     // *scratch
}

// subStats is what one subscription received.
type subStats struct {
	mu        sync.Mutex
	events    int64
	requests  int64
	unstamped int64 // events without a publish time
	first     int64 // Unix ns of the first receive, 0 before it
	last      int64 // Unix ns of the last receive
	lat       []int64
}

type scratch struct {
	body []byte
	lat  []int64
}

// newSink starts a sink for n subscriptions; hang is the number of the one
// that never answers, or -1.
func newSink(n, hang int) (*sink, error) {
	s := newRecorder(n, hang)
	var err error
	s.srv, s.ln, err = serveLoopback(s)
	return s, err
}

// newRecorder returns a sink for n subscriptions, hang the number of the
// one that never answers or -1, that serves nothing yet: its caller sets
// its server and listener.
func newRecorder(n, hang int) *sink {
	s := &sink{hang: hang, release: make(chan struct{})}
	s.scratch.New = func() any { return &scratch{body: make([]byte, 0, 64<<10)} }
	for range n {
		s.subs = append(s.subs, &subStats{})
	}
	return s
}

// serveLoopback serves h on a free loopback port until the server is
// closed.
func serveLoopback(h http.Handler) (*http.Server, net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute}
	go func() { _ = srv.Serve(ln) }()
	return srv, ln, nil
}

// endpoint returns the webhook URL of subscription i.
func (s *sink) endpoint(i int) string {
	return "http://" + s.ln.Addr().String() + "/s/" + strconv.Itoa(i)
}

// close releases hanging requests and stops the server.
func (s *sink) close() {
	close(s.release)
	_ = s.srv.Close()
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/s/"))
	if err != nil || i < 0 || i >= len(s.subs) {
		http.NotFound(w, r)
		return
	}
	if i == s.hang {
		s.hung.Add(1)
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
		return
	}
	sc := s.scratch.Get().(*scratch)
	defer s.scratch.Put(sc)
	sc.body, err = readBody(r.Body, sc.body[:0], r.ContentLength)
	now := time.Now().UnixNano()
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var unstamped int64
	sc.lat, unstamped = latencies(sc.body, now, sc.lat[:0])
	s.subs[i].record(now, sc.lat, unstamped)
	w.WriteHeader(http.StatusOK)
}

// readBody reads r into buf, growing it to size first when size is known.
func readBody(r io.Reader, buf []byte, size int64) ([]byte, error) {
	if size >= 0 {
		if int64(cap(buf)) < size {
			buf = make([]byte, 0, size)
		}
		buf = buf[:size]
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	b := bytes.NewBuffer(buf)
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// stampKey precedes the publish time in each event's data.
var stampKey = []byte(`"bt":`)

// latencies appends to lat, for every event of a delivery body, now minus
// the publish time it carries. It counts the events of the body by their
// "bt" member, as no other part of a benchmark event contains that text; an
// event whose stamp is not a number is returned in unstamped.
func latencies(body []byte, now int64, lat []int64) ([]int64, int64) {
	var unstamped int64
	for {
		i := bytes.Index(body, stampKey)
		if i < 0 {
			return lat, unstamped
		}
		body = body[i+len(stampKey):]
		for len(body) > 0 && body[0] == ' ' {
			body = body[1:]
		}
		var t int64
		n := 0
		for n < len(body) && body[n] >= '0' && body[n] <= '9' {
			t = t*10 + int64(body[n]-'0')
			n++
		}
		if n == 0 {
			unstamped++
			continue
		}
		lat = append(lat, now-t)
		body = body[n:]
	}
}

func (st *subStats) record(now int64, lat []int64, unstamped int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.requests++
	st.events += int64(len(lat)) + unstamped
	st.unstamped += unstamped
	if st.first == 0 {
		st.first = now
	}
	st.last = max(st.last, now)
	st.lat = append(st.lat, lat...)
}

// received is what a set of subscriptions received together.
type received struct {
	events, requests, unstamped int64
	first, last                 int64 // Unix ns; 0 when nothing arrived
	lat                         []int64
}

// total adds up the subscriptions numbered in which; with lat it also
// gathers their latency samples.
func (s *sink) total(which []int, lat bool) received {
	var r received
	for _, i := range which {
		st := s.subs[i]
		st.mu.Lock()
		r.events += st.events
		r.requests += st.requests
		r.unstamped += st.unstamped
		if st.first != 0 && (r.first == 0 || st.first < r.first) {
			r.first = st.first
		}
		r.last = max(r.last, st.last)
		if lat {
			r.lat = append(r.lat, st.lat...)
		}
		st.mu.Unlock()
	}
	return r
}

// wait polls until the subscriptions numbered in which have received want
// events together, or until nothing more has arrived for idle. It returns
// whether want was reached.
func (s *sink) wait(which []int, want int64, idle time.Duration) bool {
	return waitCount(want, idle, func() int64 { return s.total(which, false).events })
}

// waitCount polls count until it reaches want, or has not changed for
// idle. It returns whether want was reached.
func waitCount(want int64, idle time.Duration, count func() int64) bool {
	last, since := int64(-1), time.Now()
	for {
		got := count()
		if got >= want {
			return true
		}
		if got != last {
			last, since = got, time.Now()
		} else if time.Since(since) > idle {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// span returns the numbers 0..n-1 from from on: span(1, 10) is 1..9.
func span(from, n int) []int {
	var s []int
	for i := from; i < n; i++ {
		s = append(s, i)
	}
	return s
}

// reset forgets everything received so far.
func (s *sink) reset() {
	for _, st := range s.subs {
		st.mu.Lock()
		st.events, st.requests, st.unstamped, st.first, st.last = 0, 0, 0, 0, 0
		st.lat = st.lat[:0]
		st.mu.Unlock()
	}
}
