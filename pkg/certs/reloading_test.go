package certs_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

func TestNewFileServer_Reloads(t *testing.T) {
	ca := testpki.NewCA(t, "file root")
	dir := t.TempDir()
	certFile, keyFile := ca.WriteFiles(t, dir, "localhost")
	logs, log := newLog()

	src, err := certs.NewFileServer(certFile, keyFile, "", 10*time.Millisecond, log)
	if err != nil {
		t.Fatalf("NewFileServer: %v", err)
	}
	addr := testpki.ServeTLS(t, certs.ServerConfig(src, false), okHandler)
	first := MustServedLeaf(t, addr, "localhost", ca.Pool())
	go src.Run(t.Context())
	defer src.Close(context.Background())

	// New files: the served certificate follows without a restart.
	ca.WriteFiles(t, dir, "localhost")
	brokertest.Eventually(t, 10*time.Second, serialChanged(addr, "localhost", ca.Pool(), first))
	second := MustServedLeaf(t, addr, "localhost", ca.Pool())
	if !second.Equal(src.Current().Leaf) {
		t.Fatal("served certificate is not Current()")
	}

	// Broken files: logged, the old certificate stays.
	logs.Reset()
	testpki.MustWriteFile(t, certFile, []byte("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"))
	brokertest.Eventually(t, 10*time.Second, logContains(logs, "failed to load"))
	if leaf := MustServedLeaf(t, addr, "localhost", ca.Pool()); !leaf.Equal(second) {
		t.Fatal("broken files replaced the served certificate")
	}

	// A valid certificate with the wrong key: still the old one.
	other := ca.Issue(t, "localhost", []string{"localhost"}, nil, time.Now().Add(time.Hour))
	testpki.MustWriteFile(t, certFile, testpki.CertPEM(other))
	brokertest.Eventually(t, 10*time.Second, logContains(logs, "private key does not match"))
	if leaf := MustServedLeaf(t, addr, "localhost", ca.Pool()); !leaf.Equal(second) {
		t.Fatal("a mismatched key replaced the served certificate")
	}

	// Fixed: the new pair is served.
	testpki.MustWriteFile(t, keyFile, testpki.KeyPEM(t, other))
	brokertest.Eventually(t, 10*time.Second, serialChanged(addr, "localhost", ca.Pool(), second))
	if leaf := MustServedLeaf(t, addr, "localhost", ca.Pool()); !leaf.Equal(other.Leaf) {
		t.Fatal("served certificate is not the one in the files")
	}
	assertNoSecrets(t, logs.String())
}

func TestNewFileServer_ChainFile(t *testing.T) {
	root := testpki.NewCA(t, "root")
	inter := root.NewIntermediate(t, "intermediate")
	leaf := inter.Issue(t, "localhost", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(time.Hour))
	dir := t.TempDir()
	certFile, keyFile, caFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"), filepath.Join(dir, "ca.pem")
	// The certificate file holds the leaf only; the chain comes from caFile.
	leafOnly := leaf
	leafOnly.Certificate = leaf.Certificate[:1]
	testpki.MustWriteFile(t, certFile, testpki.CertPEM(leafOnly))
	testpki.MustWriteFile(t, keyFile, testpki.KeyPEM(t, leaf))
	chainOnly := leaf
	chainOnly.Certificate = leaf.Certificate[1:]
	testpki.MustWriteFile(t, caFile, testpki.CertPEM(chainOnly))

	src, err := certs.NewFileServer(certFile, keyFile, caFile, 0, zerolog.Nop())
	if err != nil {
		t.Fatalf("NewFileServer: %v", err)
	}
	if n := len(src.Current().Certificate); n != 2 {
		t.Fatalf("chain length = %d, want 2", n)
	}
	addr := testpki.ServeTLS(t, certs.ServerConfig(src, false), okHandler)
	MustServedLeaf(t, addr, "localhost", root.Pool()) // verifies through the served intermediate
}

func TestNewFileServer_Errors(t *testing.T) {
	ca := testpki.NewCA(t, "root")
	dir := t.TempDir()
	certFile, keyFile := ca.WriteFiles(t, dir, "localhost")
	otherCert, _ := ca.WriteFiles(t, dir, "other")
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                      string
		certFile, keyFile, caFile string
	}{
		{"MissingCert", filepath.Join(dir, "nope.crt"), keyFile, ""},
		{"MissingKey", certFile, filepath.Join(dir, "nope.key"), ""},
		{"MissingChain", certFile, keyFile, filepath.Join(dir, "nope.pem")},
		{"KeyMismatch", otherCert, keyFile, ""},
		{"GarbageCert", garbage, keyFile, ""},
		{"GarbageKey", certFile, garbage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := certs.NewFileServer(tt.certFile, tt.keyFile, tt.caFile, time.Second, zerolog.Nop()); err == nil {
				t.Fatal("NewFileServer succeeded")
			}
		})
	}
}
