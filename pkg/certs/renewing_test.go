package certs_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

func TestNewIoTEdgeServer_ServesAndRenews(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	ws.SetServerCertLifetime(3 * time.Second)
	logs, log := newLog()

	src, err := certs.NewIoTEdgeServer(t.Context(), MustWorkloadClient(t, ws), "localhost", time.Hour, log,
		certs.WithRenewFraction(0.5), certs.WithRetryBackoff(10*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatalf("NewIoTEdgeServer: %v", err)
	}
	addr := testpki.ServeTLS(t, certs.ServerConfig(src, false), okHandler)

	first := MustServedLeaf(t, addr, "localhost", ca.Pool())
	if first.Subject.CommonName != "localhost" || !slices.Contains(first.DNSNames, testpki.WorkloadModuleID) {
		t.Fatalf("served CN %q, SANs %v", first.Subject.CommonName, first.DNSNames)
	}
	if !first.Equal(src.Current().Leaf) {
		t.Fatal("served certificate is not Current()")
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); src.Run(ctx) }()

	brokertest.Eventually(t, 10*time.Second, serialChanged(addr, "localhost", ca.Pool(), first))
	if now := time.Now(); !now.Before(first.NotAfter) {
		t.Fatalf("renewed at %v, after the first certificate expired at %v", now, first.NotAfter)
	}
	second := MustServedLeaf(t, addr, "localhost", ca.Pool())
	brokertest.Eventually(t, 10*time.Second, serialChanged(addr, "localhost", ca.Pool(), second))
	if n := ws.Calls(testpki.EndpointServer); n < 3 {
		t.Fatalf("server certificate calls = %d, want at least 3", n)
	}

	cancel()
	<-done // Run returns when its context ends
	if err := src.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	assertNoSecrets(t, logs.String())
}

func TestNewIoTEdgeServer_RetriesAndKeepsServing(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	ws.SetServerCertLifetime(5 * time.Second)
	logs, log := newLog()
	src, err := certs.NewIoTEdgeServer(t.Context(), MustWorkloadClient(t, ws), "localhost", 0, log,
		certs.WithRenewFraction(0.05), certs.WithRetryBackoff(10*time.Millisecond, 40*time.Millisecond))
	if err != nil {
		t.Fatalf("NewIoTEdgeServer: %v", err)
	}
	addr := testpki.ServeTLS(t, certs.ServerConfig(src, false), okHandler)
	first := MustServedLeaf(t, addr, "localhost", ca.Pool())

	ws.SetFailure(testpki.EndpointServer, http.StatusInternalServerError, "failed to create cert")
	go src.Run(t.Context())
	defer src.Close(context.Background())

	brokertest.Eventually(t, 10*time.Second, func() error {
		if ws.Calls(testpki.EndpointServer) < 4 {
			return errors.New("fewer than three renewal attempts")
		}
		return nil
	})
	if leaf := MustServedLeaf(t, addr, "localhost", ca.Pool()); !leaf.Equal(first) {
		t.Fatal("a failed renewal replaced the served certificate")
	}
	brokertest.Eventually(t, time.Second, logContains(logs, "certificate renewal failed"))
	brokertest.Eventually(t, time.Second, logContains(logs, "failed to create cert"))

	ws.SetFailure(testpki.EndpointServer, 0, "")
	brokertest.Eventually(t, 10*time.Second, serialChanged(addr, "localhost", ca.Pool(), first))
	assertNoSecrets(t, logs.String())
}

func TestNewIoTEdgeServer_FirstFetchFails(t *testing.T) {
	ws := testpki.NewWorkloadServer(t, testpki.NewCA(t, "edge root"))
	ws.SetFailure(testpki.EndpointServer, http.StatusServiceUnavailable, "not ready")
	_, err := certs.NewIoTEdgeServer(t.Context(), MustWorkloadClient(t, ws), "localhost", time.Hour, zerolog.Nop())
	if err == nil {
		t.Fatal("NewIoTEdgeServer succeeded although the daemon failed")
	}
}

func TestNewIoTEdgeIdentity_Renews(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	ws.SetIdentityCertLifetime(3 * time.Second)
	id, err := certs.NewIoTEdgeIdentity(t.Context(), MustWorkloadClient(t, ws), time.Hour, zerolog.Nop(),
		certs.WithRenewFraction(0.3))
	if err != nil {
		t.Fatalf("NewIoTEdgeIdentity: %v", err)
	}
	first := id.Current().Leaf
	if _, err := first.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("identity certificate: %v", err)
	}
	go id.Run(t.Context())
	defer id.Close(context.Background())
	brokertest.Eventually(t, 10*time.Second, func() error {
		got, err := id.GetClientCertificate(nil)
		if err != nil {
			return err
		}
		if got.Leaf.SerialNumber.Cmp(first.SerialNumber) == 0 {
			return errors.New("identity certificate not renewed yet")
		}
		return nil
	})
}

// TestRenewing_Lifecycle checks the owner contract: Close without Run, Run
// after Close, a second Run, Close twice.
func TestRenewing_Lifecycle(t *testing.T) {
	ws := testpki.NewWorkloadServer(t, testpki.NewCA(t, "edge root"))
	c := MustWorkloadClient(t, ws)
	newSrc := func(t *testing.T) *certs.Renewing {
		src, err := certs.NewIoTEdgeServer(t.Context(), c, "localhost", time.Hour, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	t.Run("CloseWithoutRun", func(t *testing.T) {
		src := newSrc(t)
		_ = src.Close(context.Background())
		_ = src.Close(context.Background())
		src.Run(t.Context()) // returns at once after Close
	})
	t.Run("CloseStopsRun", func(t *testing.T) {
		src := newSrc(t)
		done := make(chan struct{}, 2)
		for range 2 { // one Run loops, the other returns at once
			go func() { src.Run(context.Background()); done <- struct{}{} }()
		}
		_ = src.Close(context.Background())
		for range 2 {
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after Close")
			}
		}
	})
}
