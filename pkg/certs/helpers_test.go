package certs_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
	"github.com/edgegrid/edgegrid/pkg/workload"
)

// MustWorkloadClient returns a client for ws acting as the module ws knows.
func MustWorkloadClient(tb testing.TB, ws *testpki.WorkloadServer) *workload.Client {
	tb.Helper()
	c, err := workload.New(ws.URI(), testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, testpki.WorkloadGenerationID)
	if err != nil {
		tb.Fatalf("workload.New: %v", err)
	}
	return c
}

// MustServeCert serves an "ok" handler over TLS with a fixed certificate and
// returns the address.
func MustServeCert(tb testing.TB, cert tls.Certificate) string {
	tb.Helper()
	return testpki.ServeTLS(tb, &tls.Config{Certificates: []tls.Certificate{cert}}, okHandler)
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })

// handshake dials addr with a fresh full TLS handshake using cfg and
// serverName, and returns the certificate the server presented.
func handshake(addr, serverName string, cfg *tls.Config) (*x509.Certificate, error) {
	c := cfg.Clone()
	c.ServerName = serverName
	// The timeout covers the handshake too: generous, for a loaded machine
	// under the race detector; the refusals this is used for come at once.
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 30 * time.Second}, "tcp", addr, c)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// MustServedLeaf returns the certificate served at addr, verified against
// roots for serverName.
func MustServedLeaf(tb testing.TB, addr, serverName string, roots *x509.CertPool) *x509.Certificate {
	tb.Helper()
	leaf, err := handshake(addr, serverName, &tls.Config{RootCAs: roots})
	if err != nil {
		tb.Fatalf("handshake with %s: %v", addr, err)
	}
	return leaf
}

// serialChanged is an Eventually condition: the served certificate's serial
// differs from old's.
func serialChanged(addr, serverName string, roots *x509.CertPool, old *x509.Certificate) func() error {
	return func() error {
		leaf, err := handshake(addr, serverName, &tls.Config{RootCAs: roots})
		if err != nil {
			return err
		}
		if leaf.SerialNumber.Cmp(old.SerialNumber) == 0 {
			return fmt.Errorf("still serving serial %s", old.SerialNumber)
		}
		return nil
	}
}

// logContains is an Eventually condition: the log contains s.
func logContains(b *logbuf.Buffer, s string) func() error {
	return func() error {
		if !b.Contains(s) {
			return fmt.Errorf("log does not contain %q", s)
		}
		return nil
	}
}

func newLog() (*logbuf.Buffer, zerolog.Logger) {
	b := &logbuf.Buffer{}
	return b, zerolog.New(b)
}

// assertNoSecrets fails tb when the log holds key material.
func assertNoSecrets(tb testing.TB, log string) {
	tb.Helper()
	if strings.Contains(log, "PRIVATE KEY") || strings.Contains(log, "BEGIN") {
		tb.Fatalf("log holds PEM material: %s", log)
	}
}
