package h1

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/endpointtest"
)

// heldDialer dials its first `through` dials at once and holds every
// other until its context ends, as a dial whose SYN was dropped by a full
// accept queue waits for its retransmission.
type heldDialer struct {
	through            int64
	started, cancelled atomic.Int64
}

func (d *heldDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.started.Add(1) <= d.through {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	<-ctx.Done()
	d.cancelled.Add(1)
	return nil, ctx.Err()
}

// waitingFor waits until n requests wait for a connection of c.
func waitingFor(t *testing.T, c *Client, n int) {
	t.Helper()
	brokertest.Eventually(t, 10*time.Second, func() error {
		if s := c.Stats(); s.Waiting != n {
			return fmt.Errorf("%d requests wait, want %d", s.Waiting, n)
		}
		return nil
	})
}

func TestClient_RequestTakesWhicheverComesFirst(t *testing.T) {
	// One dial gets through, the others hang: the requests waiting are
	// served, in turn, by the one connection given back. A request bound
	// to its own dial would wait out the hung dial instead.
	const n = 10
	var c *Client
	var first sync.Once
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {
		first.Do(func() { waitingFor(t, c, n-1) }) // all the others wait meanwhile
	})
	d := &heldDialer{through: 1}
	c = newClient(t, Options{Dial: d.dial})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := post(c, t, srv.URL, 20*time.Second)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if a := srv.Accepted.Load(); a != 1 {
		t.Errorf("%d connections accepted, want 1", a)
	}
	// The hung dials go on, as the Transport's do, for whatever they may
	// bring: no more of them than the slow start allows with one
	// connection open.
	if s := c.Stats(); s.Open != 1 || s.Idle != 1 || s.Dialing != minDials || d.started.Load() != minDials+1 {
		t.Errorf("%+v after %d dials: want the one connection idle and %d dials in flight", s, d.started.Load(), minDials)
	}
}

// gatedDialer holds every dial until open is closed, then dials.
type gatedDialer struct {
	open chan struct{}
}

func (d *gatedDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	select {
	case <-d.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

func TestClient_LateDialJoinsTheIdleConnections(t *testing.T) {
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {})
	d := &gatedDialer{open: make(chan struct{})}
	c := newClient(t, Options{Dial: d.dial, MaxConnsPerHost: 6})
	const n = 8
	done := make(chan error, n)
	ctx, cancel := context.WithCancel(context.Background())
	for range n {
		go func() {
			_, err := c.Post(ctx, targetOf(t, srv.URL), nil, oneEvent)
			done <- err
		}()
	}
	waitingFor(t, c, n)
	if s := c.Stats(); s.Dialing != minDials {
		t.Errorf("%d dials for %d requests waiting and no connection open, want %d", s.Dialing, n, minDials)
	}
	cancel()
	for range n {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want the request's cancellation", err)
		}
	}
	if s := c.Stats(); s.Dialing != minDials || s.Waiting != 0 {
		t.Errorf("%+v: want the dials in flight still, and no request waiting", s)
	}
	close(d.open)
	brokertest.Eventually(t, 10*time.Second, func() error {
		if s := c.Stats(); s.Dialing != 0 || s.Idle != minDials || s.Open != minDials {
			return fmt.Errorf("%+v: want the dials' connections idle", s)
		}
		return nil
	})
	for range minDials {
		postOK(c, t, srv.URL)
	}
	if a := srv.Accepted.Load(); a != minDials {
		t.Errorf("%d connections accepted, want %d", a, minDials)
	}
}

// countingDialer dials, and checks that no more dials are in flight than
// the slow start allows: at most max(minDials, connections open).
type countingDialer struct {
	c                   *Client
	inFlight, most, all atomic.Int64
	t                   *testing.T
}

func (d *countingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.all.Add(1)
	n := d.inFlight.Add(1)
	defer d.inFlight.Add(-1)
	for m := d.most.Load(); n > m && !d.most.CompareAndSwap(m, n); m = d.most.Load() {
	}
	// Connections only open in this test: open now is at least what it
	// was when this dial started.
	if open := d.c.Stats().Open; n > int64(max(minDials, open)) {
		d.t.Errorf("%d dials in flight with %d connections open", n, open)
	}
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

func TestClient_ConnectionsGrowByDoubling(t *testing.T) {
	// 40 requests the endpoint holds until all have arrived: the client
	// opens 40 connections, never more dials at once than the slow start
	// allows.
	const n = 40
	var in atomic.Int64
	all := make(chan struct{})
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {
		if in.Add(1) == n {
			close(all)
		}
		<-all
	})
	d := &countingDialer{t: t}
	c := newClient(t, Options{Dial: d.dial})
	d.c = c
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { postOK(c, t, srv.URL) })
	}
	wg.Wait()
	if a, all := srv.Accepted.Load(), d.all.Load(); a != n || all != n {
		t.Errorf("%d connections accepted of %d dialled, want %d", a, all, n)
	}
	if m := d.most.Load(); m <= minDials {
		t.Errorf("at most %d dials at once: the slow start did not grow", m)
	}
}

func TestClient_DialErrorsReachEveryRequest(t *testing.T) {
	// Nothing listens: every request fails with the refused dial, none
	// waits for its context.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	ln.Close()
	c := newClient(t, Options{MaxConnsPerHost: 3})
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			_, err := post(c, t, url, time.Minute)
			var op *net.OpError
			if !errors.As(err, &op) || op.Op != "dial" {
				t.Errorf("got %v, want the dial's error", err)
			}
		})
	}
	wg.Wait()
	brokertest.Eventually(t, 10*time.Second, func() error {
		if s := c.Stats(); s != (Stats{}) {
			return fmt.Errorf("%+v: want nothing kept", s)
		}
		return nil
	})
}

// clientGoroutines lists the goroutines running a Client's own code.
func clientGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "h1.(*Client).dialFor") || strings.Contains(g, "h1.(*Client).sweepIdle") {
			found = append(found, g)
		}
	}
	return found
}

// closing is a Client with an idle connection to one endpoint (its sweep
// due), a request in flight to another, and a request waiting for a
// connection to that one, its dial held.
type closing struct {
	c                 *Client
	d                 *heldDialer
	idle, busy        *endpointtest.Counted
	release           chan struct{}
	inFlight, waiting chan error
}

func newClosing(t *testing.T) *closing {
	x := &closing{d: &heldDialer{through: 2}, release: make(chan struct{}),
		inFlight: make(chan error, 1), waiting: make(chan error, 1)}
	x.idle = endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {})
	x.busy = endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) { <-x.release })
	x.c = New(Options{Dial: x.d.dial, IdleTimeout: time.Hour})
	postOK(x.c, t, x.idle.URL)
	go func() {
		resp, err := post(x.c, t, x.busy.URL, 20*time.Second)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		x.inFlight <- err
	}()
	brokertest.Eventually(t, 10*time.Second, func() error {
		if x.busy.Accepted.Load() != 1 {
			return errors.New("no request in flight yet")
		}
		return nil
	})
	go func() {
		_, err := post(x.c, t, x.busy.URL, 20*time.Second)
		x.waiting <- err
	}()
	waitingFor(t, x.c, 1)
	return x
}

func TestClient_CloseLeavesNothingRunning(t *testing.T) {
	x := newClosing(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := x.c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-x.waiting; !errors.Is(err, ErrClosed) {
		t.Errorf("the waiting request got %v, want ErrClosed", err)
	}
	if n := x.d.cancelled.Load(); n != 1 {
		t.Errorf("%d dials cancelled, want the held one", n)
	}
	// Close has waited for them; they may still be returning.
	brokertest.Eventually(t, 5*time.Second, func() error {
		if g := clientGoroutines(); len(g) > 0 {
			return fmt.Errorf("goroutines of the client left after Close:\n%s", strings.Join(g, "\n\n"))
		}
		return nil
	})
	x.c.mu.Lock()
	if x.c.sweep == nil || x.c.sweep.Stop() {
		t.Error("the sweep of idle connections was not set, or is still set after Close")
	}
	x.c.mu.Unlock()
	if _, err := post(x.c, t, x.idle.URL, time.Second); !errors.Is(err, ErrClosed) {
		t.Errorf("a request after Close got %v, want ErrClosed", err)
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		if n := x.idle.Open.Load(); n != 0 {
			return errors.New("the idle connection is still open")
		}
		return nil
	})
	// The request in flight ends well, and its connection is closed.
	close(x.release)
	if err := <-x.inFlight; err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		if n := x.busy.Open.Load(); n != 0 {
			return fmt.Errorf("the endpoint has %d connections open", n)
		}
		if s := x.c.Stats(); s != (Stats{}) {
			return fmt.Errorf("%+v: want nothing kept", s)
		}
		return nil
	})
}

// TestClient_DialTimeout: a dial whose TLS handshake the endpoint never
// answers (its process hung, its kernel still accepting) ends after
// DialTimeout, though the dialer bounds only its context, as
// certs.DialTLS does; its place is free for the next dial. A dial serves
// whichever request comes to it, so no request's context ends it.
func TestClient_DialTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpointtest.Serve(t, ln, 0, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }) // reads, never answers
	handshakeByContext := func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(raw, &tls.Config{ServerName: "127.0.0.1"})
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return tc, nil
	}
	c := newClient(t, Options{Dial: (&net.Dialer{}).DialContext, DialTLS: handshakeByContext, DialTimeout: 200 * time.Millisecond})
	url := "https://" + ln.Addr().String() + "/"
	for range 2 {
		if resp, err := post(c, t, url, 50*time.Millisecond); err == nil {
			resp.Body.Close()
			t.Fatal("a request to an endpoint that never answers the handshake succeeded")
		}
		brokertest.Eventually(t, 10*time.Second, func() error {
			if s := c.Stats(); s.Dialing != 0 {
				return fmt.Errorf("%d dials still in flight", s.Dialing)
			}
			return nil
		})
	}
}
