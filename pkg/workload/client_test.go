package workload_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
	"github.com/edgegrid/edgegrid/pkg/workload"
)

// MustClient returns a client for ws acting as the module ws knows.
func MustClient(tb testing.TB, ws *testpki.WorkloadServer) *workload.Client {
	tb.Helper()
	c, err := workload.New(ws.URI(), testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, testpki.WorkloadGenerationID)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return c
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		uri     string
		api     string
		module  string
		wantURI bool // error wraps ErrInvalidURI
		wantErr bool
	}{
		{"UnixSocket", "unix:///var/run/iotedge/workload.sock", "2019-01-30", "m", false, false},
		{"HTTPHostPort", "http://127.0.0.1:15580", "2019-01-30", "m", false, false},
		{"HTTPWithPrefix", "http://localhost:15580/", "2019-01-30", "m", false, false},
		{"HTTPS", "https://localhost:15580", "2019-01-30", "m", true, true},
		{"TCP", "tcp://localhost:15580", "2019-01-30", "m", true, true},
		{"NoScheme", "/var/run/iotedge/workload.sock", "2019-01-30", "m", true, true},
		{"UnixWithoutPath", "unix://", "2019-01-30", "m", true, true},
		{"UnixWithHost", "unix://host/workload.sock", "2019-01-30", "m", true, true},
		{"HTTPWithoutHost", "http://", "2019-01-30", "m", true, true},
		{"Unparsable", "http://[::1", "2019-01-30", "m", true, true},
		{"NoAPIVersion", "unix:///s.sock", "", "m", false, true},
		{"NoModule", "unix:///s.sock", "2019-01-30", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := workload.New(tt.uri, tt.api, tt.module, "1")
			if (err != nil) != tt.wantErr {
				t.Fatalf("New(%q) error = %v, want error %v", tt.uri, err, tt.wantErr)
			}
			if got := errors.Is(err, workload.ErrInvalidURI); got != tt.wantURI {
				t.Fatalf("errors.Is(err, ErrInvalidURI) = %v (err %v), want %v", got, err, tt.wantURI)
			}
			if err == nil && c.ModuleID() != tt.module {
				t.Fatalf("ModuleID() = %q", c.ModuleID())
			}
		})
	}
}

func TestClient_TrustBundle(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	certs, err := MustClient(t, ws).TrustBundle(t.Context())
	if err != nil {
		t.Fatalf("TrustBundle: %v", err)
	}
	if len(certs) != 1 || !certs[0].Equal(ca.Cert) {
		t.Fatalf("TrustBundle returned %d certificates, want the CA", len(certs))
	}
	if n := ws.Calls(testpki.EndpointTrustBundle); n != 1 {
		t.Fatalf("trust-bundle calls = %d, want 1", n)
	}

	t.Run("SeveralCertificates", func(t *testing.T) {
		other := testpki.NewCA(t, "other root")
		ws.SetTrustBundle(append(ca.PEM(), other.PEM()...))
		certs, err := MustClient(t, ws).TrustBundle(t.Context())
		if err != nil || len(certs) != 2 {
			t.Fatalf("TrustBundle = %d certificates, %v; want 2", len(certs), err)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		ws.SetTrustBundle(nil)
		if _, err := MustClient(t, ws).TrustBundle(t.Context()); err == nil {
			t.Fatal("TrustBundle with an empty bundle succeeded")
		}
	})
}

func TestClient_IdentityCert(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	c := MustClient(t, ws)

	expiry := time.Now().Add(time.Hour)
	cert, err := c.IdentityCert(t.Context(), expiry)
	if err != nil {
		t.Fatalf("IdentityCert: %v", err)
	}
	leaf := cert.Leaf
	if leaf == nil || leaf.Subject.CommonName != testpki.WorkloadModuleID {
		t.Fatalf("Leaf = %v, want CN %q", leaf, testpki.WorkloadModuleID)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("identity certificate does not verify for client auth: %v", err)
	}
	if d := leaf.NotAfter.Sub(expiry); d > time.Second || d < -time.Second {
		t.Fatalf("NotAfter = %v, want the requested %v", leaf.NotAfter, expiry)
	}
	if cert.PrivateKey == nil {
		t.Fatal("no private key")
	}

	t.Run("LifetimeCapsExpiry", func(t *testing.T) {
		ws.SetIdentityCertLifetime(10 * time.Minute)
		cert, err := c.IdentityCert(t.Context(), time.Now().Add(24*time.Hour))
		if err != nil {
			t.Fatalf("IdentityCert: %v", err)
		}
		if cert.Leaf.NotAfter.After(time.Now().Add(10 * time.Minute)) {
			t.Fatalf("NotAfter = %v, want at most 10 minutes away", cert.Leaf.NotAfter)
		}
	})
	t.Run("UnknownModule", func(t *testing.T) {
		other, err := workload.New(ws.URI(), testpki.WorkloadAPIVersion, "othermodule", testpki.WorkloadGenerationID)
		if err != nil {
			t.Fatal(err)
		}
		_, err = other.IdentityCert(t.Context(), time.Now().Add(time.Hour))
		assertStatus(t, err, http.StatusNotFound, "module not found")
	})
	if n := ws.Calls(testpki.EndpointIdentity); n != 3 {
		t.Fatalf("identity calls = %d, want 3", n)
	}
}

func TestClient_ServerCert(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	c := MustClient(t, ws)

	cert, err := c.ServerCert(t.Context(), "gateway.example", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatalf("ServerCert: %v", err)
	}
	leaf := cert.Leaf
	if leaf.Subject.CommonName != "gateway.example" {
		t.Fatalf("CN = %q", leaf.Subject.CommonName)
	}
	if !slices.Contains(leaf.DNSNames, "gateway.example") || !slices.Contains(leaf.DNSNames, testpki.WorkloadModuleID) {
		t.Fatalf("DNSNames = %v, want the common name and the module id", leaf.DNSNames)
	}
	for _, host := range []string{"gateway.example", testpki.WorkloadModuleID} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: host}); err != nil {
			t.Fatalf("server certificate does not verify for %s: %v", host, err)
		}
	}
	if len(cert.Certificate) < 2 {
		t.Fatalf("chain has %d certificates, want leaf and CA", len(cert.Certificate))
	}

	t.Run("WrongGenerationID", func(t *testing.T) {
		other, err := workload.New(ws.URI(), testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, "42")
		if err != nil {
			t.Fatal(err)
		}
		_, err = other.ServerCert(t.Context(), "gateway.example", time.Now().Add(time.Hour))
		assertStatus(t, err, http.StatusNotFound, "generation")
	})
	t.Run("NoGenerationID", func(t *testing.T) {
		other, err := workload.New(ws.URI(), testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.ServerCert(t.Context(), "gateway.example", time.Now().Add(time.Hour)); err == nil {
			t.Fatal("ServerCert without a generation id succeeded")
		}
	})
	t.Run("EmptyCommonName", func(t *testing.T) {
		if _, err := c.ServerCert(t.Context(), "", time.Now().Add(time.Hour)); err == nil {
			t.Fatal("ServerCert with an empty common name succeeded")
		}
	})
	t.Run("ExpiryInThePast", func(t *testing.T) {
		_, err := c.ServerCert(t.Context(), "gateway.example", time.Now().Add(-time.Hour))
		assertStatus(t, err, http.StatusBadRequest, "expiration")
	})
	t.Run("OldAPIVersion", func(t *testing.T) {
		old, err := workload.New(ws.URI(), "2018-06-28", testpki.WorkloadModuleID, testpki.WorkloadGenerationID)
		if err != nil {
			t.Fatal(err)
		}
		_, err = old.ServerCert(t.Context(), "gateway.example", time.Now().Add(time.Hour))
		assertStatus(t, err, http.StatusBadRequest, "invalid api-version")
	})
	t.Run("DaemonError", func(t *testing.T) {
		ws.SetFailure(testpki.EndpointServer, http.StatusInternalServerError, "failed to create cert")
		defer ws.SetFailure(testpki.EndpointServer, 0, "")
		_, err := c.ServerCert(t.Context(), "gateway.example", time.Now().Add(time.Hour))
		assertStatus(t, err, http.StatusInternalServerError, "failed to create cert")
	})
}

// TestClient_HTTP talks to the workload API over http://host:port instead of
// a unix socket.
func TestClient_HTTP(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	srv := httptest.NewServer(ws)
	defer srv.Close()
	c, err := workload.New(srv.URL, testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, testpki.WorkloadGenerationID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerCert(t.Context(), "localhost", time.Now().Add(time.Hour)); err != nil {
		t.Fatalf("ServerCert over http: %v", err)
	}
	if _, err := c.TrustBundle(t.Context()); err != nil {
		t.Fatalf("TrustBundle over http: %v", err)
	}
}

// TestClient_Responses covers answers the fake daemon does not give: odd
// bodies, a base64-wrapped PEM and a hanging daemon.
func TestClient_Responses(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	good := ca.Issue(t, "m", []string{"m"}, nil, time.Now().Add(time.Hour))
	certPEM, keyPEM := string(testpki.CertPEM(good)), string(testpki.KeyPEM(t, good))
	certBody := func(cert, keyType, key string) string {
		b, _ := json.Marshal(map[string]any{
			"certificate": cert, "expiration": good.Leaf.NotAfter.Format(time.RFC3339),
			"privateKey": map[string]string{"type": keyType, "bytes": key},
		})
		return string(b)
	}
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string // empty: success
	}{
		{"PEM", 201, certBody(certPEM, "key", keyPEM), ""},
		{"Base64PEM", 201, certBody(base64.StdEncoding.EncodeToString([]byte(certPEM)), "key",
			base64.StdEncoding.EncodeToString([]byte(keyPEM))), ""},
		{"KeyReference", 201, certBody(certPEM, "ref", ""), "unsupported private key type"},
		{"KeyMismatch", 201, certBody(certPEM, "key", string(testpki.KeyPEM(t, testpki.SelfSigned(t, "x")))), "private key does not match"},
		{"GarbageCertificate", 201, certBody("junk", "key", keyPEM), "server certificate"},
		{"NotJSON", 201, "<html>", "decode response"},
		{"WrongSuccessStatus", 200, certBody(certPEM, "key", keyPEM), "status 200"},
		{"PlainTextError", 503, "daemon busy", "status 503: daemon busy"},
		{"JSONError", 403, `{"message":"module not authorized"}`, "status 403: module not authorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := workload.New(srv.URL, "2019-01-30", "m", "1")
			if err != nil {
				t.Fatal(err)
			}
			cert, err := c.ServerCert(t.Context(), "m", time.Now().Add(time.Hour))
			if tt.wantErr == "" {
				if err != nil || cert.Leaf == nil || !cert.Leaf.Equal(good.Leaf) {
					t.Fatalf("ServerCert = %v, want the served certificate", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ServerCert error = %v, want it to contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Fatalf("error %q leaks key material", err)
			}
		})
	}

	t.Run("ContextDeadline", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		defer srv.Close()
		defer close(release)
		c, err := workload.New(srv.URL, "2019-01-30", "m", "1")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := c.TrustBundle(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("TrustBundle error = %v, want context.DeadlineExceeded", err)
		}
	})
}

func assertStatus(tb testing.TB, err error, status int, msg string) {
	tb.Helper()
	var we *workload.Error
	if !errors.As(err, &we) {
		tb.Fatalf("error = %v, want a *workload.Error", err)
	}
	if we.StatusCode != status || !strings.Contains(we.Message, msg) {
		tb.Fatalf("error = %v, want status %d and a message containing %q", err, status, msg)
	}
}
