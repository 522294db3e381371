package certs_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// holds is an Eventually condition: the bundle is exactly ca's root.
func holds(tb *certs.TrustBundle, ca *testpki.CA) func() error {
	return func() error {
		got := tb.Certificates()
		if len(got) != 1 || !got[0].Equal(ca.Cert) {
			return errors.New("bundle does not hold the expected CA yet")
		}
		return nil
	}
}

func TestNewIoTEdgeTrust_Refreshes(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	logs, log := newLog()
	tb, err := certs.NewIoTEdgeTrust(t.Context(), MustWorkloadClient(t, ws), log,
		certs.WithRefreshInterval(20*time.Millisecond), certs.WithRetryBackoff(5*time.Millisecond, 10*time.Millisecond))
	if err != nil {
		t.Fatalf("NewIoTEdgeTrust: %v", err)
	}
	leaf := ca.Issue(t, "client", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{Roots: tb.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("Pool does not verify a certificate of the bundle's CA: %v", err)
	}
	go tb.Run(t.Context())
	defer tb.Close(context.Background())

	// A failing daemon keeps the current bundle.
	ws.SetFailure(testpki.EndpointTrustBundle, http.StatusInternalServerError, "unavailable")
	brokertest.Eventually(t, 5*time.Second, logContains(logs, "trust bundle refresh failed"))
	if err := holds(tb, ca)(); err != nil {
		t.Fatal(err)
	}

	// A new bundle replaces it.
	next := testpki.NewCA(t, "next root")
	ws.SetTrustBundle(next.PEM())
	ws.SetFailure(testpki.EndpointTrustBundle, 0, "")
	brokertest.Eventually(t, 5*time.Second, holds(tb, next))
	assertNoSecrets(t, logs.String())
}

func TestNewIoTEdgeTrust_FirstFetchFails(t *testing.T) {
	ws := testpki.NewWorkloadServer(t, testpki.NewCA(t, "edge root"))
	ws.SetTrustBundle([]byte("no certificates here"))
	if _, err := certs.NewIoTEdgeTrust(t.Context(), MustWorkloadClient(t, ws), zerolog.Nop()); err == nil {
		t.Fatal("NewIoTEdgeTrust accepted an empty bundle")
	}
}

func TestNewFileTrust_Reloads(t *testing.T) {
	ca := testpki.NewCA(t, "file root")
	path := filepath.Join(t.TempDir(), "ca.pem")
	testpki.MustWriteFile(t, path, ca.PEM())
	logs, log := newLog()
	tb, err := certs.NewFileTrust(path, 10*time.Millisecond, log)
	if err != nil {
		t.Fatalf("NewFileTrust: %v", err)
	}
	go tb.Run(t.Context())
	defer tb.Close(context.Background())

	testpki.MustWriteFile(t, path, []byte("garbage"))
	brokertest.Eventually(t, 5*time.Second, logContains(logs, "refresh failed"))
	if err := holds(tb, ca)(); err != nil {
		t.Fatal(err)
	}
	next := testpki.NewCA(t, "next root")
	testpki.MustWriteFile(t, path, next.PEM())
	brokertest.Eventually(t, 5*time.Second, holds(tb, next))
}

func TestLoadCAFile(t *testing.T) {
	dir := t.TempDir()
	a, b := testpki.NewCA(t, "a"), testpki.NewCA(t, "b")
	good := filepath.Join(dir, "good.pem")
	testpki.MustWriteFile(t, good, append(a.PEM(), b.PEM()...))
	empty := filepath.Join(dir, "empty.pem")
	testpki.MustWriteFile(t, empty, []byte("nothing"))
	bad := filepath.Join(dir, "bad.pem")
	testpki.MustWriteFile(t, bad, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))

	tb, err := certs.LoadCAFile(good)
	if err != nil {
		t.Fatalf("LoadCAFile: %v", err)
	}
	if got := tb.Certificates(); len(got) != 2 || !got[0].Equal(a.Cert) || !got[1].Equal(b.Cert) {
		t.Fatalf("Certificates() = %d certificates, want a and b", len(got))
	}
	tb.Run(t.Context()) // a fixed bundle's Run returns at once
	for _, path := range []string{empty, bad, filepath.Join(dir, "missing.pem")} {
		if _, err := certs.LoadCAFile(path); err == nil {
			t.Fatalf("LoadCAFile(%s) succeeded", filepath.Base(path))
		}
	}

	var none *certs.TrustBundle
	if none.Pool() != nil || none.Certificates() != nil || none.Close(context.Background()) != nil {
		t.Fatal("a nil bundle is not empty")
	}
}
