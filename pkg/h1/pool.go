package h1

import (
	"context"
	"slices"
	"time"
)

// hostKey names the connections to one address.
type hostKey struct {
	tls  bool
	addr string
}

// host are the connections to one address. open counts the connections
// idle and in use; open and the dials in flight are at most
// Client.maxPerHost together. A request that finds no idle connection
// waits in waiting, first come, first served, for whichever comes first:
// a connection given back or one dialled; a connection dialled when no
// request waits any more is kept idle, as the Transport keeps it.
//
// A dial is started only while fewer are in flight than requests wait,
// and while fewer are in flight than max(minDials, open): the connections
// to an address grow by doubling, as TCP's slow start grows its window,
// instead of all at once. A burst of requests to an endpoint with a small
// listen backlog would otherwise send it more SYNs at once than its accept
// queue holds; the ones dropped are sent again a second later, the ones
// whose handshake the endpoint could not finish leave connections it
// does not know of, and a request written on one waits for the
// endpoint's retransmissions.
type host struct {
	key     hostKey
	idle    []*conn // the oldest first
	open    int
	dials   int       // in flight
	waiting []*waiter // the oldest first
}

// minDials is how many dials may be in flight to an address with fewer
// connections open: fewer than the accept queue of the smallest listen
// backlog in common use (Python's socketserver asks for 5) holds, so that
// the first burst of requests to an endpoint overflows none.
const minDials = 4

// waiter is a request waiting for a connection: it is handed one, or the
// error of a dial, exactly once.
type waiter struct {
	ch chan handoff
}

type handoff struct {
	c   *conn
	err error
}

// get returns a connection to t: an idle one, or the first one given back
// or dialled while it waits.
func (c *Client) get(ctx context.Context, t *Target) (*conn, error) {
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		h := c.hostLocked(t)
		n := len(h.idle)
		if n == 0 {
			return c.wait(ctx, h) // unlocks
		}
		cn := h.idle[n-1]
		h.idle[n-1] = nil
		h.idle = h.idle[:n-1]
		c.mu.Unlock()
		if time.Since(cn.idleAt) < checkIdleAfter || alive(cn.nc) {
			return cn, nil
		}
		_ = cn.nc.Close()
		c.mu.Lock()
		h.open--
		// Dropped if nothing is left of it: the next turn finds it anew.
		c.forgetLocked(h)
	}
}

// wait queues a request for a connection to h, starting a dial if it
// needs one, and waits for one or for ctx to end. Called with c.mu held;
// it unlocks it.
func (c *Client) wait(ctx context.Context, h *host) (*conn, error) {
	w := &waiter{ch: make(chan handoff, 1)}
	h.waiting = append(h.waiting, w)
	c.dialLocked(h)
	c.mu.Unlock()
	select {
	case r := <-w.ch:
		return r.c, r.err
	case <-ctx.Done():
	}
	c.mu.Lock()
	if i := slices.Index(h.waiting, w); i >= 0 {
		// A dial it started goes on: its connection is kept idle.
		h.waiting = slices.Delete(h.waiting, i, i+1)
		c.forgetLocked(h)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
	c.mu.Unlock()
	// Handed a connection or an error meanwhile: the connection goes back.
	if r := <-w.ch; r.c != nil {
		c.put(r.c)
	}
	return nil, ctx.Err()
}

// hostLocked returns the connections to t's address, new ones if none are
// kept. Called with c.mu held.
func (c *Client) hostLocked(t *Target) *host {
	k := hostKey{t.TLS, t.Addr}
	h := c.hosts[k]
	if h == nil {
		h = &host{key: k}
		c.hosts[k] = h
	}
	return h
}

// forgetLocked drops h once nothing of it is left. Called with c.mu held.
func (c *Client) forgetLocked(h *host) {
	if h.open == 0 && len(h.idle) == 0 && len(h.waiting) == 0 && h.dials == 0 && c.hosts[h.key] == h {
		delete(c.hosts, h.key)
	}
}

// dialLocked starts dials to h while fewer are in flight than requests
// wait, within the bound on connections and the slow start's. Called with
// c.mu held.
func (c *Client) dialLocked(h *host) {
	for ; h.dials < len(h.waiting) && h.open+h.dials < c.maxPerHost && h.dials < max(minDials, h.open) && !c.closed; h.dials++ {
		c.running.Add(1)
		go c.dialFor(h)
	}
}

// dialFor dials d, a connection to h, and hands the connection to the
// first request waiting, or keeps it idle. A failed dial fails the first
// request waiting, as the Transport fails the request that dialled; when
// no connection to h is open, it fails every request waiting but one for
// each dial still in flight, as their own dials would have failed in the
// Transport.
//
// A dial serves whichever request it comes to, not the one it was started
// for, so it does not end with that request: it has dialTimeout, and Close
// cancels it.
func (c *Client) dialFor(h *host) {
	defer c.running.Done()
	dial := c.dial
	if h.key.tls {
		dial = c.dialTLS
	}
	ctx, cancel := context.WithTimeout(c.dialCtx, c.dialTimeout)
	nc, err := dial(ctx, "tcp", h.key.addr)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	h.dials--
	switch {
	case c.closed:
		if err == nil {
			_ = nc.Close()
		}
	case err != nil:
		fail := min(len(h.waiting), 1)
		if h.open == 0 {
			fail = max(fail, len(h.waiting)-h.dials)
		}
		for range fail {
			h.handLocked(handoff{err: err})
		}
		c.dialLocked(h) // for requests it leaves without a dial
	default:
		h.open++
		c.putLocked(newConn(nc, h))
		c.dialLocked(h) // one more open: the slow start's bound grows
	}
	c.forgetLocked(h)
}

// handLocked hands r to the first request waiting for a connection to h.
// Called with c.mu held and some request waiting.
func (h *host) handLocked(r handoff) {
	w := h.waiting[0]
	h.waiting = slices.Delete(h.waiting, 0, 1)
	w.ch <- r // never blocks: w is handed one thing, and has room for it
}

// put gives back a connection whose last answer was read whole.
func (c *Client) put(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = cn.nc.Close()
		cn.h.open--
		c.forgetLocked(cn.h)
		return
	}
	c.putLocked(cn)
}

// putLocked gives cn to the first request waiting for one, or keeps it
// idle. Called with c.mu held.
func (c *Client) putLocked(cn *conn) {
	h := cn.h
	if len(h.waiting) > 0 {
		h.handLocked(handoff{c: cn})
		return
	}
	cn.idleAt = time.Now()
	h.idle = append(h.idle, cn)
	if !c.sweeping {
		c.sweeping = true
		c.running.Add(1)
		if c.sweep == nil {
			c.sweep = time.AfterFunc(c.idleTimeout/3, c.sweepIdle)
		} else {
			c.sweep.Reset(c.idleTimeout / 3)
		}
	}
}

// discard closes a connection that is not to be used again; its room may
// serve a request waiting.
func (c *Client) discard(cn *conn) {
	_ = cn.nc.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	cn.h.open--
	c.dialLocked(cn.h)
	c.forgetLocked(cn.h)
}

// sweepIdle closes the connections idle for idleTimeout, and comes again
// while some are idle.
func (c *Client) sweepIdle() {
	defer c.running.Done()
	var old []*conn
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	now := time.Now()
	idle := false
	for _, h := range c.hosts {
		k := 0
		for k < len(h.idle) && now.Sub(h.idle[k].idleAt) >= c.idleTimeout {
			k++
		}
		if k > 0 {
			old = append(old, h.idle[:k]...)
			n := copy(h.idle, h.idle[k:])
			clear(h.idle[n:])
			h.idle = h.idle[:n]
			h.open -= k
			c.forgetLocked(h)
		}
		idle = idle || len(h.idle) > 0
	}
	c.sweeping = idle
	if idle {
		c.running.Add(1)
		c.sweep.Reset(c.idleTimeout / 3)
	}
	c.mu.Unlock()
	for _, cn := range old {
		_ = cn.nc.Close()
	}
}
