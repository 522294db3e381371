package webhook

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/h1"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/endpointtest"
)

// slowEndpoint is an endpoint as Python's http.server is by default: a
// listen backlog of 5, a connection accepted every acceptPause, and every
// request answered after work done under one lock for all (Python's
// interpreter lock). Its accept queue overflows when many connections are
// dialled at once: the SYNs it drops are sent again a second later.
func slowEndpoint(t *testing.T, acceptPause, work time.Duration) started {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), 5) }); err != nil || lerr != nil {
		t.Fatalf("setting the listen backlog: %v %v", err, lerr)
	}
	var gil sync.Mutex
	accepted := endpointtest.Serve(t, ln, acceptPause, func(c net.Conn) { answerSlowly(c, &gil, work) })
	return started{url: "http://" + ln.Addr().String(), accepted: accepted}
}

// answerSlowly answers every request read from c with 200, after work
// done holding gil.
func answerSlowly(c net.Conn, gil *sync.Mutex, work time.Duration) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		gil.Lock()
		for t0 := time.Now(); time.Since(t0) < work; {
		}
		gil.Unlock()
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"); err != nil {
			return
		}
	}
}

// countedDials counts the dials in flight and the connections they opened.
type countedDials struct {
	inFlight, opened atomic.Int64
}

func (d *countedDials) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.inFlight.Add(1)
	defer d.inFlight.Add(-1)
	c, err := dialer.DialContext(ctx, network, addr)
	if err == nil {
		d.opened.Add(1)
	}
	return c, err
}

// fanOutResult is what a fan-out came to: the connections the client
// opened and the endpoint accepted by the time every request had ended,
// the requests that failed, and how long it took.
type fanOutResult struct {
	opened, accepted int64
	failed           int64
	took             time.Duration
}

// fanOut sends per requests for each of subs subscriptions of e, each to a
// path of its own, all subscriptions at once, the way r says, with as many
// connections allowed as the broker allows by default.
func fanOut(t *testing.T, e started, r route, subs, per int) fanOutResult {
	const maxConns = 300 // broker__maxConcurrentDeliveries 100, and 200 parked requests
	d := &countedDials{}
	s := New(Options{MaxConnsPerHost: maxConns})
	if r == viaH1 {
		s.conns = h1.New(h1.Options{Dial: d.dial, MaxConnsPerHost: maxConns})
	} else {
		s.client.Transport.(*http.Transport).DialContext = d.dial
	}
	var res fanOutResult
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range subs {
		wg.Go(func() {
			for range per {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if err := deliverVia(ctx, s, oneEvent(fmt.Sprintf("%s/s/%d", e.url, i)), r); err != nil {
					atomic.AddInt64(&res.failed, 1)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	res.took = time.Since(t0)
	res.opened, res.accepted = d.opened.Load(), e.accepted.Load()
	// Dials still in flight (SYNs the endpoint dropped) are cancelled.
	_ = s.Close(context.Background())
	brokertest.Eventually(t, 40*time.Second, func() error {
		if n := d.inFlight.Load(); n != 0 {
			return fmt.Errorf("%d dials still in flight", n)
		}
		return nil
	})
	return res
}

func TestDifferential_ManySubscriptionsOfASlowEndpoint(t *testing.T) {
	// 101 subscriptions of one endpoint with a listen backlog of 5 get 7
	// requests each, all subscriptions at once, as 101 events published
	// in one request and delivered in batches of 16 make them.
	const subs, per = 101, 7
	var got [2]fanOutResult
	for i, r := range routes {
		got[i] = fanOut(t, slowEndpoint(t, time.Millisecond, 300*time.Microsecond), r, subs, per)
		t.Logf("%s: %d connections opened, %d accepted, %d of %d requests failed, %v",
			r, got[i].opened, got[i].accepted, got[i].failed, subs*per, got[i].took)
	}
	h, tr := got[0], got[1]
	if h.failed != 0 || tr.failed != 0 {
		t.Errorf("requests failed: %d over h1, %d through the Transport", h.failed, tr.failed)
	}
	if h.opened > tr.opened || h.accepted > tr.accepted {
		t.Errorf("h1 opened %d connections (%d accepted), the Transport %d (%d)", h.opened, h.accepted, tr.opened, tr.accepted)
	}
	if h.opened >= subs {
		t.Errorf("h1 opened %d connections for %d subscriptions: not shared", h.opened, subs)
	}
}

func TestDifferential_ManyRequestsAtOnce(t *testing.T) {
	// 40 requests of 40 subscriptions, which the endpoint holds until all
	// have arrived: both open 40 connections, no more.
	const n = 40
	for _, r := range routes {
		var in atomic.Int64
		all := make(chan struct{})
		srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {
			if in.Add(1) == n {
				close(all)
			}
			<-all
		})
		res := fanOut(t, started{url: srv.URL, accepted: &srv.Accepted}, r, n, 1)
		if res.failed != 0 || res.opened != n || res.accepted != n {
			t.Errorf("%s: %d failed, %d connections opened, %d accepted; want none failed and %d connections", r, res.failed, res.opened, res.accepted, n)
		}
	}
}
