package testpki

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"
)

// ServeTLS serves h over TLS with cfg on a new loopback listener
// (127.0.0.1, a free port) and returns its address. Handshake errors are
// discarded rather than logged. The server stops when the test ends. It
// fails tb on error.
func ServeTLS(tb testing.TB, cfg *tls.Config, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testpki: listen: %v", err)
	}
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(tls.NewListener(ln, cfg)) }()
	tb.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}
