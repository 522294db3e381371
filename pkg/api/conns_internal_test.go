package api

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// pipeConn is one end of a net.Pipe, whose other end tells when it is
// closed.
func pipeConn(t *testing.T) (net.Conn, func() bool) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, func() bool {
		_ = b.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err := b.Read(make([]byte, 1))
		ne, ok := err.(net.Error)
		return !(ok && ne.Timeout())
	}
}

// TestConnSet_AdmitEvictsIdleLongest: at the bound a new connection takes
// the place of the one idle the longest; with none idle it is refused.
func TestConnSet_AdmitEvictsIdleLongest(t *testing.T) {
	s := newConnSet(3, zerolog.Nop())
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	var closed []func() bool
	var conns []net.Conn
	for i := range 3 {
		c, isClosed := pipeConn(t)
		if !s.admit(c) {
			t.Fatalf("connection %d refused below the bound", i)
		}
		conns, closed = append(conns, c), append(closed, isClosed)
	}
	s.setState(conns[0], http.StateActive)
	now = now.Add(time.Second)
	s.setState(conns[2], http.StateIdle) // idle first
	now = now.Add(time.Second)
	s.setState(conns[1], http.StateIdle)
	c, _ := pipeConn(t)
	if !s.admit(c) {
		t.Fatal("a connection refused with two idle")
	}
	if !closed[2]() || closed[1]() || closed[0]() {
		t.Errorf("closed: active %v, idle last %v, idle longest %v; want only the idle longest", closed[0](), closed[1](), closed[2]())
	}
	s.setState(conns[1], http.StateActive)
	d, _ := pipeConn(t)
	if s.admit(d) {
		t.Error("a connection admitted with none idle at the bound")
	}
	if n := s.open(); n != 3 {
		t.Errorf("%d open; want 3", n)
	}
	s.setState(conns[0], http.StateClosed)
	if !s.admit(d) || s.open() != 3 {
		t.Errorf("a connection refused once one closed")
	}
}

// TestConnSet_Drain: the stop closes an idle connection once it has been
// idle for the grace since the stop, waits for an active one until it is
// idle for the grace too, and gives up at ctx's end.
func TestConnSet_Drain(t *testing.T) {
	s := newConnSet(0, zerolog.Nop())
	idle, idleClosed := pipeConn(t)
	busy, busyClosed := pipeConn(t)
	s.admit(idle)
	s.admit(busy)
	s.setState(idle, http.StateIdle)
	s.setState(busy, http.StateActive)
	stopped := time.Now()
	done := make(chan error, 1)
	go func() { done <- s.drain(context.Background(), stopped, 50*time.Millisecond) }()
	deadline := time.Now().Add(5 * time.Second)
	for !idleClosed() {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection was not closed")
		}
	}
	if busyClosed() {
		t.Fatal("the active connection was closed")
	}
	s.setState(busy, http.StateIdle) // its answer is written
	select {
	case err := <-done:
		if err != nil || !busyClosed() {
			t.Fatalf("drain = %v, busy closed %v", err, busyClosed())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("drain did not end once every connection was closed")
	}

	stuck, _ := pipeConn(t)
	s.admit(stuck)
	s.setState(stuck, http.StateActive)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.drain(ctx, time.Now(), time.Millisecond); err == nil {
		t.Error("drain returned nil with a connection still active at ctx's end")
	}
	s.closeAll()
	if s.open() != 0 {
		t.Error("closeAll left connections")
	}
}
