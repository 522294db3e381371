// Package endpointtest holds loopback HTTP endpoints for the tests of HTTP
// clients: each counts the connections it accepts, so that a test can say
// how many a client opened, kept and closed.
//
// It is for tests only.
package endpointtest

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Counted is an httptest server that counts the connections it accepted,
// those open now, and the most open at once.
type Counted struct {
	*httptest.Server
	Accepted, Open, Peak atomic.Int64
}

// NewCounted starts a Counted answering by handler, over TLS with tlsCfg
// when it is not nil, after configure has set up its http.Server. It stops
// when the test ends.
func NewCounted(tb testing.TB, tlsCfg *tls.Config, handler http.HandlerFunc, configure ...func(*http.Server)) *Counted {
	tb.Helper()
	c := &Counted{Server: httptest.NewUnstartedServer(handler)}
	for _, f := range configure {
		f(c.Config)
	}
	c.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			c.Accepted.Add(1)
			n := c.Open.Add(1)
			for p := c.Peak.Load(); n > p && !c.Peak.CompareAndSwap(p, n); p = c.Peak.Load() {
			}
		case http.StateClosed, http.StateHijacked:
			c.Open.Add(-1)
		}
	}
	if tlsCfg != nil {
		c.TLS = tlsCfg
		c.StartTLS()
	} else {
		c.Start()
	}
	tb.Cleanup(c.Close)
	return c
}

// Serve accepts connections on ln until the test ends, counting them in
// the value it returns, and serves each with serve, in a goroutine of its
// own; it waits pause after each accept (an endpoint's own pace). When the
// test ends it closes ln and every connection, and waits for the
// goroutines.
func Serve(tb testing.TB, ln net.Listener, pause time.Duration, serve func(net.Conn)) *atomic.Int64 {
	accepted := new(atomic.Int64)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close() // clients keep them idle
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { serve(c) })
			if pause > 0 {
				time.Sleep(pause) // the endpoint's pace, not a wait of the test's
			}
		}
	})
	return accepted
}

// Raw starts an endpoint on a loopback port that answers every request
// with answer, written as it is, and returns its URL (with a trailing /)
// and the count of connections it accepted.
func Raw(tb testing.TB, answer string) (url string, accepted *atomic.Int64) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	accepted = Serve(tb, ln, 0, func(c net.Conn) { Answer(c, answer) })
	return "http://" + ln.Addr().String() + "/", accepted
}

// Answer reads requests from c and writes answer to each, until c ends or
// a write fails; it closes c.
func Answer(c net.Conn, answer string) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		if _, err := io.WriteString(c, answer); err != nil {
			return
		}
	}
}
