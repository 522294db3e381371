package certs_test

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

func TestNewSelfSigned(t *testing.T) {
	src, err := certs.NewSelfSigned("eventgridmodule", "10.0.0.7", "LOCALHOST", " ", "::1")
	if err != nil {
		t.Fatalf("NewSelfSigned: %v", err)
	}
	leaf := src.Current().Leaf
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	if leaf.Subject.CommonName != host {
		t.Fatalf("CN = %q, want the host name %q", leaf.Subject.CommonName, host)
	}
	for _, name := range []string{host, "localhost", "eventgridmodule"} {
		if !slices.ContainsFunc(leaf.DNSNames, func(n string) bool { return strings.EqualFold(n, name) }) {
			t.Fatalf("DNSNames %v lack %q", leaf.DNSNames, name)
		}
	}
	if n := countFold(leaf.DNSNames, "localhost"); n != 1 {
		t.Fatalf("localhost appears %d times in %v", n, leaf.DNSNames)
	}
	wantIPs := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.7")}
	if len(leaf.IPAddresses) != len(wantIPs) {
		t.Fatalf("IPAddresses = %v, want %v", leaf.IPAddresses, wantIPs)
	}
	for _, ip := range wantIPs {
		if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
			t.Fatalf("IPAddresses %v lack %v", leaf.IPAddresses, ip)
		}
	}
	if d := time.Until(leaf.NotAfter); d < 700*24*time.Hour || d > certs.SelfSignedValidity {
		t.Fatalf("valid for %v more, want about %v", d, certs.SelfSignedValidity)
	}

	// It is its own root, valid for every name, over a real handshake.
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	addr := testpki.ServeTLS(t, certs.ServerConfig(src, false), okHandler)
	for _, name := range []string{"localhost", "eventgridmodule", "127.0.0.1", "10.0.0.7"} {
		if got := MustServedLeaf(t, addr, name, pool); !got.Equal(leaf) {
			t.Fatalf("served another certificate for %s", name)
		}
	}
}

func countFold(list []string, s string) int {
	n := 0
	for _, v := range list {
		if strings.EqualFold(v, s) {
			n++
		}
	}
	return n
}

func TestNewStatic(t *testing.T) {
	cert := testpki.SelfSigned(t, "localhost")
	cert.Leaf = nil
	src, err := certs.NewStatic(cert)
	if err != nil {
		t.Fatalf("NewStatic: %v", err)
	}
	if src.Current().Leaf == nil {
		t.Fatal("NewStatic did not parse the leaf")
	}
	if _, err := certs.NewStatic(tls.Certificate{}); err == nil {
		t.Fatal("NewStatic accepted an empty certificate")
	}
}
