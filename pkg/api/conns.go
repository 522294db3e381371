package api

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// The API's client connections (docs/api.md#connections), across its
// listeners: at most Options.MaxConnections open at once. At the bound, a
// new connection takes the place of the one idle the longest (a keep-alive
// connection between requests), which is closed; when none is idle the new
// one is refused: answered 503 TooManyConnections with Connection: close
// (over TLS once its handshake is done) and closed, so that a client learns
// why rather than seeing a reset. The broker's stop (Server.Close) closes
// every connection once it is done with it (see drain).

// DefaultMaxConnections is api__maxConnections' default.
const DefaultMaxConnections = 2048

// DefaultStopGrace is how long a connection idle when the broker stops, or
// idle after an answer written before, is kept open for a request already
// on its way, which is answered 503 with Connection: close, before it is
// closed.
const DefaultStopGrace = time.Second

// Bounds of the refusals of connections beyond the bound: how many are
// written at once (beyond, a connection is closed without an answer), and
// how long each may take, its TLS handshake included.
const (
	maxRefusing    = 16
	refusalTimeout = time.Second
	// refusalLogInterval is the least time between two log lines about
	// refused connections.
	refusalLogInterval = 10 * time.Second
)

// connSet tracks the API's connections, from the listeners' Accept to
// the servers' StateClosed (http.Server.ConnState).
type connSet struct {
	max int
	log zerolog.Logger
	now func() time.Time
	// refusal is the error envelope of a refused connection.
	refusal []byte

	mu      sync.Mutex
	conns   map[net.Conn]*connInfo
	changed chan struct{} // a token when a connection changed state

	refusing   chan struct{} // a token per refusal being written
	refusals   sync.WaitGroup
	refused    atomic.Int64 // refusals since the last log line
	lastLogged atomic.Int64 // Unix ns of the last log line about refusals
}

// connInfo is what the set knows of a connection: its state, and since
// when.
type connInfo struct {
	state http.ConnState
	since time.Time
}

func newConnSet(max int, log zerolog.Logger) *connSet {
	refusal := envelopeJSON(envelope{Error: envelopeError{Code: eventgrid.StatusName(http.StatusServiceUnavailable), Details: envelopeDetails{
		Code:    eventgrid.ETooManyConnections,
		Message: "The broker holds its limit of " + strconv.Itoa(max) + " open connections, none of them idle (api__maxConnections); retry later.",
	}}})
	return &connSet{max: max, log: log, now: time.Now, refusal: refusal, conns: map[net.Conn]*connInfo{},
		changed: make(chan struct{}, 1), refusing: make(chan struct{}, maxRefusing)}
}

// open returns how many connections are open now.
func (s *connSet) open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// admit reports whether c may be served, making room by closing the
// connection idle the longest when the set is at its bound.
func (s *connSet) admit(c net.Conn) bool {
	now := s.now()
	s.mu.Lock()
	if s.max > 0 && len(s.conns) >= s.max {
		var victim net.Conn
		var since time.Time
		for vc, ci := range s.conns {
			if ci.state == http.StateIdle && (victim == nil || ci.since.Before(since)) {
				victim, since = vc, ci.since
			}
		}
		if victim == nil {
			s.mu.Unlock()
			return false
		}
		delete(s.conns, victim)
		defer func() { _ = victim.Close() }()
	}
	s.conns[c] = &connInfo{state: http.StateNew, since: now}
	s.mu.Unlock()
	return true
}

// setState is http.Server.ConnState: it follows a connection the set
// admitted until it is closed.
func (s *connSet) setState(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
	default:
		if ci := s.conns[c]; ci != nil && ci.state != st {
			ci.state, ci.since = st, s.now()
		}
	}
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// refuse answers c, a connection beyond the bound, and closes it, in the
// background; beyond maxRefusing refusals at once it is closed at once.
func (s *connSet) refuse(c net.Conn) {
	s.noteRefused()
	select {
	case s.refusing <- struct{}{}:
	default:
		_ = c.Close()
		return
	}
	s.refusals.Add(1)
	go func() {
		defer s.refusals.Done()
		defer func() { <-s.refusing }()
		writeRefusal(c, s.refusal, s.now().Add(refusalTimeout))
	}()
}

// noteRefused counts a refused connection and logs, at most once every
// refusalLogInterval, how many were refused since the last line.
func (s *connSet) noteRefused() {
	n := s.refused.Add(1)
	now := s.now().UnixNano()
	last := s.lastLogged.Load()
	if now-last < int64(refusalLogInterval) || !s.lastLogged.CompareAndSwap(last, now) {
		return
	}
	s.refused.Add(-n)
	s.log.Warn().Int("maxConnections", s.max).Int64("refused", n).
		Msg("connections refused: the API holds its limit of open connections, none of them idle (api__maxConnections)")
}

// writeRefusal writes a 503 answer with Connection: close to c before
// deadline, stops writing, reads and discards what the client sent (so
// that closing does not reset the connection before the client read the
// answer) until it stops or the deadline, and closes c.
func writeRefusal(c net.Conn, body []byte, deadline time.Time) {
	defer c.Close()
	_ = c.SetDeadline(deadline)
	head := "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: " +
		strconv.Itoa(streamRetryAfter) + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	if _, err := c.Write(append([]byte(head), body...)); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

// drain waits, once the broker stops (at stopped), until every connection
// is closed: each one closes after the answer it is writing (it carries
// Connection: close), and one idle, or not yet sending a request, is
// closed once it has been so for grace since the stop or since it became
// idle, whichever is later; a request that arrives meanwhile is answered
// 503 with Connection: close. It returns ctx's error if ctx is done first.
func (s *connSet) drain(ctx context.Context, stopped time.Time, grace time.Duration) error {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		now := s.now()
		var idle []net.Conn
		next := time.Duration(-1)
		s.mu.Lock()
		left := len(s.conns)
		for c, ci := range s.conns {
			if ci.state != http.StateIdle && ci.state != http.StateNew {
				continue
			}
			from := ci.since
			if from.Before(stopped) {
				from = stopped
			}
			if wait := from.Add(grace).Sub(now); wait > 0 {
				if next < 0 || wait < next {
					next = wait
				}
				continue
			}
			idle = append(idle, c)
			delete(s.conns, c)
		}
		s.mu.Unlock()
		for _, c := range idle {
			_ = c.Close()
		}
		if left == len(idle) {
			return nil
		}
		if next >= 0 {
			timer.Reset(next)
		} else {
			timer.Stop()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.changed:
		case <-timer.C:
		}
	}
}

// closeAll closes every connection left, and waits for the refusals being
// written.
func (s *connSet) closeAll() {
	s.mu.Lock()
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	clear(s.conns)
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	s.refusals.Wait()
}

// boundedListener admits the connections it accepts into the set, and
// refuses those beyond its bound. Close may be called more than once: the
// broker's stop closes it before the server does.
type boundedListener struct {
	net.Listener
	set *connSet

	once sync.Once
	err  error
}

func (l *boundedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.set.admit(c) {
			return c, nil
		}
		l.set.refuse(c)
	}
}

// Close closes the listener the first time, and reports nil after.
func (l *boundedListener) Close() error {
	first := false
	l.once.Do(func() { first, l.err = true, l.Listener.Close() })
	if first {
		return l.err
	}
	return nil
}
