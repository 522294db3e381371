package certs_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

func TestOutboundConfig_ServerVerification(t *testing.T) {
	ca := testpki.NewCA(t, "trusted root")
	inter := ca.NewIntermediate(t, "trusted intermediate")
	unknown := testpki.NewCA(t, "unknown root")
	hour := time.Now().Add(time.Hour)
	local := []string{"localhost"}
	loopback := []net.IP{net.IPv4(127, 0, 0, 1)}

	selfSigned := MustServeCert(t, testpki.SelfSigned(t, "localhost"))
	trusted := MustServeCert(t, ca.Issue(t, "localhost", local, loopback, hour, x509.ExtKeyUsageServerAuth))
	viaIntermediate := MustServeCert(t, inter.Issue(t, "localhost", local, nil, hour, x509.ExtKeyUsageServerAuth))
	trustedExpired := MustServeCert(t, ca.Issue(t, "localhost", local, nil, time.Now().Add(-time.Minute), x509.ExtKeyUsageServerAuth))
	unknownExpired := MustServeCert(t, unknown.Issue(t, "localhost", local, nil, time.Now().Add(-time.Minute), x509.ExtKeyUsageServerAuth))
	unknownClientOnly := MustServeCert(t, unknown.Issue(t, "localhost", local, nil, hour, x509.ExtKeyUsageClientAuth))
	trustedClientOnly := MustServeCert(t, ca.Issue(t, "localhost", local, nil, hour, x509.ExtKeyUsageClientAuth))
	trustBundle := certs.NewTrustBundle(ca.Cert)

	skip := certs.OutboundOptions{SkipServerCertValidation: true}
	allowUnknown := certs.OutboundOptions{AllowUnknownCA: true}
	strict := certs.OutboundOptions{}
	strictTrust := certs.OutboundOptions{Trust: trustBundle}
	allowTrust := certs.OutboundOptions{AllowUnknownCA: true, Trust: trustBundle}

	tests := []struct {
		name       string
		addr       string
		serverName string
		opts       certs.OutboundOptions
		wantOK     bool
	}{
		{"SkipValidation", selfSigned, "wrong.example", skip, true},
		{"SkipValidationExpired", unknownExpired, "localhost", skip, true},
		{"AllowUnknownCA", selfSigned, "localhost", allowUnknown, true},
		{"AllowUnknownCAWrongHost", selfSigned, "wrong.example", allowUnknown, false},
		{"AllowUnknownCAExpired", unknownExpired, "localhost", allowUnknown, false},
		{"AllowUnknownCAClientOnlyUsage", unknownClientOnly, "localhost", allowUnknown, false},
		{"StrictSelfSigned", selfSigned, "localhost", strict, false},
		{"StrictUnknownCA", trusted, "localhost", strict, false},
		{"TrustedCA", trusted, "localhost", strictTrust, true},
		{"TrustedCAWrongHost", trusted, "wrong.example", strictTrust, false},
		{"TrustedCAThroughIntermediate", viaIntermediate, "localhost", strictTrust, true},
		{"TrustedCAExpired", trustedExpired, "localhost", allowTrust, false},
		{"TrustedCAClientOnlyUsage", trustedClientOnly, "localhost", allowTrust, false},
		{"TrustedCAWithAllowUnknown", trusted, "localhost", allowTrust, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := certs.OutboundConfig(tt.opts)
			if cfg.MinVersion != tls.VersionTLS12 {
				t.Fatalf("MinVersion = %x", cfg.MinVersion)
			}
			_, err := handshake(tt.addr, tt.serverName, cfg)
			if (err == nil) != tt.wantOK {
				t.Fatalf("handshake error = %v, want success %v", err, tt.wantOK)
			}
		})
	}
}

// get fetches url with a client using tr and returns the body.
func get(tr *http.Transport, url string) (string, error) {
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

func TestOutboundConfig_IPAddressEndpoints(t *testing.T) {
	ca := testpki.NewCA(t, "trusted root")
	withIP := MustServeCert(t, ca.Issue(t, "localhost", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(time.Hour)))
	nameOnly := MustServeCert(t, testpki.SelfSigned(t, "localhost"))
	_, port, _ := net.SplitHostPort(withIP)
	trust := certs.OutboundOptions{Trust: certs.NewTrustBundle(ca.Cert)}
	allow := certs.OutboundOptions{AllowUnknownCA: true}

	t.Run("ConfigByName", func(t *testing.T) {
		if _, err := get(&http.Transport{TLSClientConfig: certs.OutboundConfig(trust)}, "https://localhost:"+port); err != nil {
			t.Fatalf("GET by name: %v", err)
		}
	})
	t.Run("ConfigByIPFailsClosed", func(t *testing.T) {
		_, err := get(&http.Transport{TLSClientConfig: certs.OutboundConfig(trust)}, "https://"+withIP)
		if !errors.Is(err, certs.ErrNoServerName) {
			t.Fatalf("GET by IP error = %v, want ErrNoServerName", err)
		}
	})
	t.Run("DialTLSByIP", func(t *testing.T) {
		tr := &http.Transport{DialTLSContext: certs.DialTLS(trust, nil)}
		if body, err := get(tr, "https://"+withIP); err != nil || body != "ok" {
			t.Fatalf("GET by IP through DialTLS = %q, %v", body, err)
		}
	})
	t.Run("DialTLSByIPWrongSAN", func(t *testing.T) {
		tr := &http.Transport{DialTLSContext: certs.DialTLS(allow, &net.Dialer{Timeout: time.Second})}
		if _, err := get(tr, "https://"+nameOnly); err == nil {
			t.Fatal("a certificate for localhost passed for 127.0.0.1")
		}
	})
	t.Run("DialTLSSkipValidation", func(t *testing.T) {
		tr := &http.Transport{DialTLSContext: certs.DialTLS(certs.OutboundOptions{SkipServerCertValidation: true}, nil)}
		if _, err := get(tr, "https://"+nameOnly); err != nil {
			t.Fatalf("GET with validation skipped: %v", err)
		}
	})
}

// TestOutboundConfig_Identity presents the IoT Edge identity certificate to a
// server that requires and verifies client certificates.
func TestOutboundConfig_Identity(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	id, err := certs.NewIoTEdgeIdentity(t.Context(), MustWorkloadClient(t, ws), time.Hour, zerolog.Nop())
	if err != nil {
		t.Fatalf("NewIoTEdgeIdentity: %v", err)
	}
	serverCert := ca.Issue(t, "localhost", []string{"localhost"}, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageServerAuth)
	addr := testpki.ServeTLS(t, &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool(),
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	_, port, _ := net.SplitHostPort(addr)
	url := "https://localhost:" + port
	trust := certs.NewTrustBundle(ca.Cert)

	t.Run("IoTEdgeIdentity", func(t *testing.T) {
		cfg := certs.OutboundConfig(certs.OutboundOptions{Trust: trust, Identity: id})
		body, err := get(&http.Transport{TLSClientConfig: cfg}, url)
		if err != nil || body != testpki.WorkloadModuleID {
			t.Fatalf("GET = %q, %v; want the module id as the client CN", body, err)
		}
	})
	t.Run("FileIdentity", func(t *testing.T) {
		certFile, keyFile := ca.WriteFiles(t, t.TempDir(), "filemodule")
		fileID, err := certs.NewFileIdentity(certFile, keyFile, time.Second, zerolog.Nop())
		if err != nil {
			t.Fatalf("NewFileIdentity: %v", err)
		}
		cfg := certs.OutboundConfig(certs.OutboundOptions{Trust: trust, Identity: fileID})
		if body, err := get(&http.Transport{TLSClientConfig: cfg}, url); err != nil || body != "filemodule" {
			t.Fatalf("GET = %q, %v", body, err)
		}
	})
	t.Run("NoIdentity", func(t *testing.T) {
		cfg := certs.OutboundConfig(certs.OutboundOptions{Trust: trust})
		if _, err := get(&http.Transport{TLSClientConfig: cfg}, url); err == nil {
			t.Fatal("GET without a client certificate succeeded")
		}
	})
}

func TestServerConfig(t *testing.T) {
	src, err := certs.NewStatic(testpki.SelfSigned(t, "localhost"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		clientCerts bool
		want        tls.ClientAuthType
	}{
		{"NoClientCerts", false, tls.NoClientCert},
		{"RequestClientCerts", true, tls.RequestClientCert},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := certs.ServerConfig(src, tt.clientCerts)
			if cfg.ClientAuth != tt.want || cfg.MinVersion != tls.VersionTLS12 || cfg.GetCertificate == nil {
				t.Fatalf("ServerConfig = ClientAuth %v, MinVersion %x", cfg.ClientAuth, cfg.MinVersion)
			}
		})
	}
	t.Run("RefusesTLS11", func(t *testing.T) {
		addr := testpki.ServeTLS(t, certs.ServerConfig(src, false), okHandler)
		if _, err := handshake(addr, "localhost", &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11}); err == nil {
			t.Fatal("TLS 1.1 handshake succeeded")
		}
	})
}
