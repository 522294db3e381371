package h1

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// MaxHeaderBytes bounds an answer's status lines and headers, the 1xx
// answers' with the final one's. NewHTTPClient in pkg/webhook gives the
// Transport the same bound.
const MaxHeaderBytes = 1 << 20

const (
	// maxDrain is how much of an answer's body is read so that its
	// connection can be used again; a longer body closes the connection.
	maxDrain = 64 << 10
	// checkIdleAfter is how long a connection may stay idle before it is
	// checked, when taken again, for a close by the endpoint: endpoints
	// close idle connections (Node.js after 5 s, for example), and a
	// request written on one would fail. The Transport learns of such a
	// close at once, as it always reads; here a connection idle this long
	// is peeked at, one system call, before it is used.
	checkIdleAfter = 50 * time.Millisecond
	// defaultIdleTimeout is how long an idle connection is kept, as the
	// Transport's IdleConnTimeout was.
	defaultIdleTimeout = 90 * time.Second
	// defaultDialTimeout bounds a dial as the Transport's are bounded
	// with the broker's dialer: 30 s to connect and 15 s for the TLS
	// handshake. A dial of certs.DialTLS has no bound of its own for its
	// handshake.
	defaultDialTimeout = 45 * time.Second
	// defaultMaxConnsPerHost is the bound on connections to one address
	// when Options gives none.
	defaultMaxConnsPerHost = 100
)

var (
	// ErrClosed is the error of a request made after Close.
	ErrClosed = errors.New("h1: client closed")
	// errHeaderTooLong is an answer whose header does not end within
	// MaxHeaderBytes.
	errHeaderTooLong = fmt.Errorf("the answer's header is longer than %d bytes", MaxHeaderBytes)
)

// DialFunc dials a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Options configure a Client.
type Options struct {
	// Dial dials plain connections, and the connections TLS is set up on
	// when DialTLS is nil. Required.
	Dial DialFunc
	// DialTLS, if not nil, dials TLS connections whole (certs.DialTLS).
	DialTLS DialFunc
	// TLSConfig configures the handshake of TLS connections when DialTLS
	// is nil: as with the Transport, its copy names the server when it
	// names none, and the handshake has 15 seconds. nil means Go's
	// defaults.
	TLSConfig *tls.Config
	// MaxConnsPerHost bounds the connections open or being dialled to one
	// address; 100 when not positive.
	MaxConnsPerHost int
	// IdleTimeout is how long an idle connection is kept; 90 s when not
	// positive.
	IdleTimeout time.Duration
	// DialTimeout bounds a dial, the TLS handshake included, whatever
	// Dial and DialTLS bound themselves; 45 s when not positive.
	DialTimeout time.Duration
}

// Target is where a request goes.
type Target struct {
	// TLS says that the connection is https.
	TLS bool
	// Addr is the host and port to dial. Connections are kept by TLS and
	// Addr: requests to every path of an address share them.
	Addr string
	// Host is the request's Host header, URI its request-target (the
	// path and query, "/" when empty).
	Host, URI string
}

// Client posts requests over the connections it keeps. Its zero value is
// not usable: make one with New.
type Client struct {
	dial, dialTLS DialFunc
	maxPerHost    int
	idleTimeout   time.Duration
	dialTimeout   time.Duration
	// dialCtx is the context of every dial, which Close cancels
	// (stopDials).
	dialCtx   context.Context
	stopDials context.CancelFunc

	mu    sync.Mutex
	hosts map[hostKey]*host
	// sweep closes the connections idle for idleTimeout; it is due while
	// sweeping, which some idle connection keeps so.
	sweep    *time.Timer
	sweeping bool
	closed   bool
	// running counts the dials in flight and the sweep while it is due,
	// for Close to wait for.
	running sync.WaitGroup
}

// New returns a Client.
func New(o Options) *Client {
	c := &Client{dial: o.Dial, dialTLS: o.DialTLS, maxPerHost: o.MaxConnsPerHost, idleTimeout: o.IdleTimeout,
		dialTimeout: o.DialTimeout, hosts: map[hostKey]*host{}}
	c.dialCtx, c.stopDials = context.WithCancel(context.Background())
	if c.dialTLS == nil {
		c.dialTLS = tlsDialer(o.Dial, o.TLSConfig)
	}
	if c.maxPerHost <= 0 {
		c.maxPerHost = defaultMaxConnsPerHost
	}
	if c.idleTimeout <= 0 {
		c.idleTimeout = defaultIdleTimeout
	}
	if c.dialTimeout <= 0 {
		c.dialTimeout = defaultDialTimeout
	}
	return c
}

// Post posts body, the concatenation of its parts, to t with the header
// h, as the Transport would, and reads the answer: its status and header,
// and its body, read (up to 64 KiB) and dropped. The answer's Body is
// http.NoBody. An invalid header name or value is an error before
// anything is sent.
func (c *Client) Post(ctx context.Context, t *Target, h http.Header, body [][]byte) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if err := checkHeader(h); err != nil {
		return nil, err
	}
	cn, err := c.get(ctx, t)
	if err != nil {
		return nil, err
	}
	resp, reuse, err := cn.exchange(ctx, t, h, body)
	if reuse {
		c.put(cn)
	} else {
		c.discard(cn)
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if _, ok := ctx.Deadline(); ok || ctx.Err() != nil {
				// The context's end set the deadline, or ends now with
				// it: say so, as the Transport does.
				<-ctx.Done()
				return nil, context.Cause(ctx)
			}
		}
		return nil, err
	}
	return resp, nil
}

// Close closes the idle connections, cancels the dials in flight and
// stops the sweep of idle connections, and waits until the dials have
// ended, or until ctx ends (its error is returned then). Connections in
// use are closed as their requests end. Requests made after Close fail
// with ErrClosed; Close may be called more than once.
func (c *Client) Close(ctx context.Context) error {
	var idle []*conn
	c.mu.Lock()
	c.closed = true
	c.stopDials()
	if c.sweeping && c.sweep.Stop() {
		c.sweeping = false
		c.running.Done()
	}
	for _, h := range c.hosts {
		idle = append(idle, h.idle...)
		h.open -= len(h.idle)
		h.idle = nil
		for _, w := range h.waiting {
			w.ch <- handoff{err: ErrClosed}
		}
		h.waiting = nil
		c.forgetLocked(h)
	}
	c.mu.Unlock()
	for _, cn := range idle {
		_ = cn.nc.Close()
	}
	done := make(chan struct{})
	go func() {
		c.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("h1: dials still in flight: %w", ctx.Err())
	}
}

// Stats are counts of what a Client holds, over every address.
type Stats struct {
	// Hosts is how many addresses it keeps anything for.
	Hosts int
	// Open is how many connections are open: idle or carrying a request.
	Open int
	// Idle is how many of them are idle.
	Idle int
	// Dialing is how many dials are in flight; Waiting how many requests
	// wait for a connection.
	Dialing, Waiting int
}

// Stats returns what c holds now.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Stats{Hosts: len(c.hosts)}
	for _, h := range c.hosts {
		s.Open += h.open
		s.Idle += len(h.idle)
		s.Dialing += h.dials
		s.Waiting += len(h.waiting)
	}
	return s
}

// checkHeader checks h as the Transport checks a request's header.
func checkHeader(h http.Header) error {
	for k, vs := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("net/http: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				// The value is left out: it may be a secret.
				return fmt.Errorf("net/http: invalid header field value for %q", k)
			}
		}
	}
	return nil
}

// tlsDialer dials as the Transport does without a DialTLSContext: the
// configuration's copy names the server when it names none, and the
// handshake has 15 seconds.
func tlsDialer(dial DialFunc, cfg *tls.Config) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		if c == nil {
			c = &tls.Config{}
		}
		if c.ServerName == "" {
			c.ServerName = host
		}
		tc := tls.Client(raw, c)
		hctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			raw.Close()
			return nil, err
		}
		return tc, nil
	}
}
