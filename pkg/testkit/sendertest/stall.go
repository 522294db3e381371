package sendertest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Stall is a TCP proxy on a loopback port in front of a counterpart that
// has no statuses to fail with (an MQTT broker): Hang makes it stop passing
// bytes on, in both directions, while it keeps its connections open, so
// that a client waits for an answer that never comes, as it would from a
// hung peer. It stops, closing every connection, when the test ends.
type Stall struct {
	ln     net.Listener
	target string
	hung   atomic.Bool
	done   chan struct{}

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// NewStall starts a Stall passing connections on to target (host:port).
func NewStall(tb testing.TB, target string) *Stall {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("sendertest: stall proxy: %v", err)
	}
	s := &Stall{ln: ln, target: target, done: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	tb.Cleanup(s.close)
	return s
}

// Addr is the proxy's host:port.
func (s *Stall) Addr() string { return s.ln.Addr().String() }

// Hang stops the proxy passing bytes on, for good.
func (s *Stall) Hang() { s.hung.Store(true) }

func (s *Stall) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", s.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		if !s.track(c, up) {
			return
		}
		s.wg.Add(2)
		go s.pipe(up, c)
		go s.pipe(c, up)
	}
}

// track records the connections for close; false when the proxy is
// closing, after closing them.
func (s *Stall) track(conns ...net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	default:
	}
	s.conns = append(s.conns, conns...)
	return true
}

// pipe copies from src to dst until either closes; once the proxy hangs,
// it reads on but passes nothing.
func (s *Stall) pipe(dst, src net.Conn) {
	defer s.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !s.hung.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			_ = dst.Close()
			return
		}
	}
}

func (s *Stall) close() {
	s.mu.Lock()
	close(s.done)
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	_ = s.ln.Close()
	for _, c := range conns {
		_ = c.Close()
	}
	s.wg.Wait()
}
