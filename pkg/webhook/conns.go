package webhook

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// A delivery to an http or https URL that no proxy serves is sent on a
// connection the Sender keeps itself, by the worker that sends it: the
// worker writes the request and reads the answer. net/http's Transport
// reads each connection from a goroutine of its own and writes from
// another, so each request crossed three goroutines and their channels,
// and the Transport's bookkeeping (the connection pool's wants, the
// request's cancellation, the headers sorted to be written) came to about
// a quarter of the broker's CPU per unbatched event. What is kept of
// net/http: the answer is read by http.ReadResponse, header names and
// values are checked as the Transport checks them, and connections are
// dialled as the Transport dialled them (the same dialer, the same TLS
// dialing).
//
// Requests go over HTTP/1.1, as the Transport sent them too: it never
// offered HTTP/2 with a TLS configuration of its caller's.

const (
	// maxHeaderBytes bounds an answer's status line and header.
	maxHeaderBytes = 1 << 20
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
	// idleTimeout is how long an idle connection is kept, as the
	// Transport's IdleConnTimeout was.
	idleTimeout = 90 * time.Second
	// writeChunk is the most written to a connection at once: a body up
	// to this size goes in one write with the header.
	writeChunk = flatMax
)

// errHeaderTooLong is an answer whose header does not end within
// maxHeaderBytes.
var errHeaderTooLong = fmt.Errorf("the answer's header is longer than %d bytes", maxHeaderBytes)

// conns keeps the connections of direct deliveries, by destination
// address.
type conns struct {
	dial       func(ctx context.Context, network, addr string) (net.Conn, error)
	dialTLS    func(ctx context.Context, network, addr string) (net.Conn, error)
	maxPerHost int
	// idleTimeout is how long an idle connection is kept: the constant,
	// shorter in tests.
	idleTimeout time.Duration

	mu       sync.Mutex
	hosts    map[string]*hostConns
	sweeping bool // a sweep of idle connections is due
}

// hostConns are the connections to one address. open counts the
// connections idle, in use and being dialled, at most conns.maxPerHost;
// a request that finds none idle and no room to dial waits in waiting,
// first come, first served, for a connection or the room to dial one.
type hostConns struct {
	key     string
	tls     bool
	addr    string
	idle    []*conn // the oldest first
	open    int
	waiting []chan *conn
}

// conn is one connection.
type conn struct {
	nc     net.Conn
	h      *hostConns
	lim    limitedReader // between br and nc
	br     *bufio.Reader
	wbuf   []byte
	idleAt time.Time
}

// limitedReader reads from c until left runs out.
type limitedReader struct {
	c    net.Conn
	left int64
}

func (r *limitedReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, errHeaderTooLong
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.c.Read(p)
	r.left -= int64(n)
	return n, err
}

// newConns dials plain connections with dial, TLS ones with dialTLS, or,
// when dialTLS is nil, with dial and a TLS handshake by tlsConfig.
func newConns(dial, dialTLS func(ctx context.Context, network, addr string) (net.Conn, error), tlsConfig *tls.Config, maxPerHost int) *conns {
	if dialTLS == nil {
		dialTLS = tlsDialer(dial, tlsConfig)
	}
	return &conns{dial: dial, dialTLS: dialTLS, maxPerHost: maxPerHost, idleTimeout: idleTimeout,
		hosts: map[string]*hostConns{}}
}

// tlsDialer dials as the Transport does without a DialTLSContext: the
// configuration's copy names the server when it names none, and the
// handshake has 15 seconds.
func tlsDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
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

// get returns a connection to ep: an idle one, a new one, or, when
// maxPerHost are open, the first one given back or the room to dial one.
func (cs *conns) get(ctx context.Context, ep *endpoint) (*conn, error) {
	cs.mu.Lock()
	h := cs.hostLocked(ep)
	for n := len(h.idle); n > 0; n = len(h.idle) {
		c := h.idle[n-1]
		h.idle[n-1] = nil
		h.idle = h.idle[:n-1]
		cs.mu.Unlock()
		if time.Since(c.idleAt) < checkIdleAfter || alive(c.nc) {
			return c, nil
		}
		cs.discard(c)
		cs.mu.Lock()
		// The discard may have dropped h, its last connection gone: a
		// connection counted in a dropped h would never be found again.
		h = cs.hostLocked(ep)
	}
	if h.open < cs.maxPerHost {
		h.open++
		cs.mu.Unlock()
		return cs.dialConn(ctx, h)
	}
	ch := make(chan *conn, 1)
	h.waiting = append(h.waiting, ch)
	cs.mu.Unlock()
	select {
	case c := <-ch:
		if c != nil {
			return c, nil
		}
		return cs.dialConn(ctx, h)
	case <-ctx.Done():
	}
	cs.mu.Lock()
	for i, w := range h.waiting {
		if w == ch {
			h.waiting = append(h.waiting[:i], h.waiting[i+1:]...)
			cs.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	cs.mu.Unlock()
	// Handed a connection, or the room to dial one, meanwhile: pass it on.
	if c := <-ch; c != nil {
		cs.put(c)
	} else {
		cs.release(h)
	}
	return nil, ctx.Err()
}

// hostLocked returns the connections to ep's address, new ones if none is
// kept. Called with cs.mu held.
func (cs *conns) hostLocked(ep *endpoint) *hostConns {
	h := cs.hosts[ep.key]
	if h == nil {
		h = &hostConns{key: ep.key, tls: ep.tls, addr: ep.addr}
		cs.hosts[ep.key] = h
	}
	return h
}

// dialConn dials a connection to h, whose open count has it already.
func (cs *conns) dialConn(ctx context.Context, h *hostConns) (*conn, error) {
	dial := cs.dial
	if h.tls {
		dial = cs.dialTLS
	}
	nc, err := dial(ctx, "tcp", h.addr)
	if err != nil {
		cs.release(h)
		return nil, err
	}
	c := &conn{nc: nc, h: h}
	c.lim.c = nc
	c.br = bufio.NewReaderSize(&c.lim, 4<<10)
	return c, nil
}

// put gives back a connection whose last answer was read whole: to the
// first request waiting for one, or to the idle ones.
func (cs *conns) put(c *conn) {
	h := c.h
	cs.mu.Lock()
	if len(h.waiting) > 0 {
		ch := h.waiting[0]
		h.waiting = append(h.waiting[:0], h.waiting[1:]...)
		cs.mu.Unlock()
		ch <- c
		return
	}
	c.idleAt = time.Now()
	h.idle = append(h.idle, c)
	if !cs.sweeping {
		cs.sweeping = true
		time.AfterFunc(cs.idleTimeout/3, cs.sweep)
	}
	cs.mu.Unlock()
}

// discard closes a connection that is not to be used again.
func (cs *conns) discard(c *conn) {
	_ = c.nc.Close()
	cs.release(c.h)
}

// release gives up the place of a connection to h that was closed or not
// dialled: to the first request waiting, which dials one, or for good.
func (cs *conns) release(h *hostConns) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(h.waiting) > 0 {
		ch := h.waiting[0]
		h.waiting = append(h.waiting[:0], h.waiting[1:]...)
		ch <- nil
		return
	}
	h.open--
	cs.forgetLocked(h)
}

// forgetLocked drops h once nothing of it is left. Called with cs.mu
// held.
func (cs *conns) forgetLocked(h *hostConns) {
	if h.open == 0 && len(h.idle) == 0 && len(h.waiting) == 0 && cs.hosts[h.key] == h {
		delete(cs.hosts, h.key)
	}
}

// sweep closes the connections idle for idleTimeout, and comes again while
// some are idle.
func (cs *conns) sweep() {
	var old []*conn
	cs.mu.Lock()
	now := time.Now()
	idle := false
	for _, h := range cs.hosts {
		k := 0
		for k < len(h.idle) && now.Sub(h.idle[k].idleAt) >= cs.idleTimeout {
			k++
		}
		if k > 0 {
			old = append(old, h.idle[:k]...)
			n := copy(h.idle, h.idle[k:])
			clear(h.idle[n:])
			h.idle = h.idle[:n]
			h.open -= k
			cs.forgetLocked(h)
		}
		idle = idle || len(h.idle) > 0
	}
	cs.sweeping = idle
	if idle {
		time.AfterFunc(cs.idleTimeout/3, cs.sweep)
	}
	cs.mu.Unlock()
	for _, c := range old {
		_ = c.nc.Close()
	}
}

// postRequest is what http.ReadResponse is told of the request an answer
// is for: a POST.
var postRequest = &http.Request{Method: http.MethodPost}

// do posts b to ep with the header h, as the Transport would, and reads
// the answer: its status and header, and its body, read (up to maxDrain)
// and dropped. The answer's Body is http.NoBody.
func (cs *conns) do(ctx context.Context, ep *endpoint, h http.Header, b *body) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if err := checkHeader(h); err != nil {
		return nil, err
	}
	c, err := cs.get(ctx, ep)
	if err != nil {
		return nil, err
	}
	deadline, _ := ctx.Deadline()
	if err := c.nc.SetDeadline(deadline); err != nil {
		cs.discard(c)
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(aLongTimeAgo) })
	var resp *http.Response
	reuse := false
	if err = ctx.Err(); err == nil { // else it ended while the connection was got
		resp, reuse, err = c.roundTrip(ep, h, b)
	} else {
		err = os.ErrDeadlineExceeded
	}
	if !stop() {
		reuse = false // the deadline is past: the connection cannot be used again
	}
	if reuse {
		cs.put(c)
	} else {
		cs.discard(c)
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

// aLongTimeAgo is a deadline that has passed: it ends a connection's
// reads and writes at once.
var aLongTimeAgo = time.Unix(1, 0)

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

// roundTrip writes the request and reads its answer; reuse says that the
// connection can carry another request.
func (c *conn) roundTrip(ep *endpoint, h http.Header, b *body) (resp *http.Response, reuse bool, err error) {
	if err := c.write(ep, h, b); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, false, err
		}
		// The endpoint may have answered before it stopped reading (a 413
		// for a body too large, say) and closed the connection: its
		// answer is worth more than the write's error.
		c.lim.left = maxHeaderBytes
		if resp, rerr := http.ReadResponse(c.br, postRequest); rerr == nil && resp.StatusCode >= 200 {
			resp.Body = http.NoBody
			return resp, false, nil
		}
		return nil, false, err
	}
	for {
		c.lim.left = maxHeaderBytes
		resp, err = http.ReadResponse(c.br, postRequest)
		if err != nil {
			return nil, false, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode < 100 {
			break
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, false, errors.New("net/http: unexpected 101 Switching Protocols answer to a POST")
		}
		// 1xx: informational; the answer follows.
	}
	c.lim.left = math.MaxInt64
	reuse = !resp.Close
	if resp.Body != http.NoBody {
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain+1))
		if err != nil || n > maxDrain {
			// Not read to its end: the connection goes with it. The
			// status stands, as it did when the body was read by
			// CheckResponse.
			reuse = false
		}
		resp.Body = http.NoBody
	}
	return resp, reuse, nil
}

// write writes the request: its header, then its body, in writes of at
// most writeChunk bytes beyond the header.
func (c *conn) write(ep *endpoint, h http.Header, b *body) error {
	buf := c.wbuf[:0]
	buf = append(buf, "POST "...)
	buf = append(buf, ep.uri...)
	buf = append(buf, " HTTP/1.1\r\nHost: "...)
	buf = append(buf, ep.host...)
	buf = append(buf, "\r\n"...)
	agent := false
	for k, vs := range h {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue // the Transport writes its own, or none
		case "User-Agent":
			agent = true
		}
		for _, v := range vs {
			buf = append(buf, k...)
			buf = append(buf, ": "...)
			buf = append(buf, textproto.TrimString(v)...)
			buf = append(buf, "\r\n"...)
		}
	}
	if !agent {
		buf = append(buf, "User-Agent: Go-http-client/1.1\r\n"...)
	}
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, b.size, 10)
	buf = append(buf, "\r\n\r\n"...)
	var big *[]byte
	if n := len(buf) + int(b.size); n > cap(buf) {
		if n <= keptBuffer {
			buf = slices.Grow(buf, n-len(buf))
		} else {
			// Written in chunks of writeChunk, from a buffer only this
			// request holds.
			big = bigBuffers.Get().(*[]byte)
			buf = append((*big)[:0], buf...)
		}
	}
	for _, p := range b.parts {
		for len(p) > 0 {
			if len(buf) >= writeChunk {
				if _, err := c.nc.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			k := min(len(p), writeChunk-len(buf))
			buf = append(buf, p[:k]...)
			p = p[k:]
		}
	}
	_, err := c.nc.Write(buf)
	if big != nil {
		if cap(buf) == cap(*big) {
			*big = buf[:0]
			bigBuffers.Put(big)
		}
	} else if cap(buf) <= keptBuffer {
		c.wbuf = buf[:0]
	} else {
		c.wbuf = nil // a header of its own size: not kept
	}
	return err
}

// keptBuffer is the largest request a connection keeps a buffer for: its
// header and a body of a few events. Larger requests take one of
// bigBuffers while they are written, so that an idle connection holds no
// more than this.
const keptBuffer = 4 << 10

// bigBuffers are the buffers of requests larger than keptBuffer: room for
// a header of up to 4 KiB and a chunk of writeChunk, after which the
// buffer is written out and filled again.
var bigBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, writeChunk+4<<10)
	return &b
}}
