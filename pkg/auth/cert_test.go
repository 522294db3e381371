package auth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// result is what the test handler reports.
type result struct {
	OK     bool
	Reason string
}

// authHandler authenticates each request with a and reports the outcome.
func authHandler(a *auth.Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reason, err := a.Authenticate(r)
		_ = json.NewEncoder(w).Encode(result{OK: err == nil, Reason: reason})
	})
}

// MustServeAuth serves authHandler(a) over TLS with a listener config from
// certs.ServerConfig (client certificates requested) and returns its URL.
func MustServeAuth(tb testing.TB, a *auth.Authenticator) string {
	tb.Helper()
	src, err := certs.NewStatic(testpki.SelfSigned(tb, "localhost"))
	if err != nil {
		tb.Fatal(err)
	}
	return "https://" + testpki.ServeTLS(tb, certs.ServerConfig(src, true), authHandler(a)) + "/topics/t1/api/events"
}

// MustCall sends a request presenting client (when not nil) and headers, and
// returns the handler's result.
func MustCall(tb testing.TB, url string, client *tls.Certificate, headers map[string]string) result {
	tb.Helper()
	cfg := &tls.Config{InsecureSkipVerify: true}
	if client != nil {
		cfg.Certificates = []tls.Certificate{*client}
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(tb.Context(), "POST", url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		tb.Fatalf("request: %v", err)
	}
	defer res.Body.Close()
	var out result
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		tb.Fatalf("decode: %v", err)
	}
	return out
}

func TestAuthenticate_ClientCert(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	inter := ca.NewIntermediate(t, "edge intermediate")
	unknown := testpki.NewCA(t, "unknown root")
	hour := time.Now().Add(time.Hour)
	trusted := ca.Issue(t, "client", nil, nil, hour, x509.ExtKeyUsageClientAuth)
	viaIntermediate := inter.Issue(t, "client", nil, nil, hour, x509.ExtKeyUsageClientAuth)
	withoutIntermediate := viaIntermediate
	withoutIntermediate.Certificate = viaIntermediate.Certificate[:1]
	noUsage := ca.Issue(t, "client", nil, nil, hour, x509.ExtKeyUsageAny)
	serverOnly := ca.Issue(t, "client", nil, nil, hour, x509.ExtKeyUsageServerAuth)
	expired := ca.Issue(t, "client", nil, nil, time.Now().Add(-time.Minute), x509.ExtKeyUsageClientAuth)
	fromUnknown := unknown.Issue(t, "client", nil, nil, hour, x509.ExtKeyUsageClientAuth)
	selfSigned := testpki.SelfSigned(t, "client")
	bundle := certs.NewTrustBundle(ca.Cert)

	strict := auth.Options{ClientCertEnabled: true, Trust: bundle}
	lenient := auth.Options{ClientCertEnabled: true, Trust: bundle, AllowUnknownCA: true}
	tests := []struct {
		name   string
		opts   auth.Options
		cert   *tls.Certificate
		wantOK bool
		reason string
	}{
		{"Trusted", strict, &trusted, true, "client certificate trusted"},
		{"TrustedThroughSentIntermediate", strict, &viaIntermediate, true, "client certificate trusted"},
		{"IntermediateNotSent", strict, &withoutIntermediate, false, "client certificate not trusted"},
		{"AnyUsage", strict, &noUsage, true, "client certificate trusted"},
		{"ServerUsageOnly", lenient, &serverOnly, false, "client certificate not for client authentication"},
		{"UnknownCAStrict", strict, &fromUnknown, false, "client certificate not trusted"},
		{"UnknownCAAllowed", lenient, &fromUnknown, true, "client certificate from an unknown CA allowed"},
		{"SelfSignedStrict", strict, &selfSigned, false, "client certificate not trusted"},
		{"SelfSignedAllowed", lenient, &selfSigned, true, "client certificate from an unknown CA allowed"},
		{"Expired", lenient, &expired, false, "client certificate expired"},
		{"Missing", lenient, nil, false, "no client certificate"},
		{"NoTrustStrict", auth.Options{ClientCertEnabled: true}, &trusted, false, "client certificate not trusted"},
		{"NoTrustAllowUnknown", auth.Options{ClientCertEnabled: true, AllowUnknownCA: true}, &trusted, true, "client certificate from an unknown CA allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MustCall(t, MustServeAuth(t, auth.New(tt.opts)), tt.cert, nil)
			if got.OK != tt.wantOK || got.Reason != tt.reason {
				t.Fatalf("Authenticate = %+v, want ok %v reason %q", got, tt.wantOK, tt.reason)
			}
		})
	}

	t.Run("NotYetValid", func(t *testing.T) {
		a := auth.New(auth.Options{ClientCertEnabled: true, AllowUnknownCA: true,
			Now: func() time.Time { return time.Now().Add(-24 * time.Hour) }})
		got := MustCall(t, MustServeAuth(t, a), &trusted, nil)
		if got.OK || got.Reason != "client certificate not yet valid" {
			t.Fatalf("Authenticate = %+v", got)
		}
	})
}

// TestAuthenticate_PlainHTTP: no certificate can arrive over plain HTTP.
func TestAuthenticate_PlainHTTP(t *testing.T) {
	tests := []struct {
		name    string
		opts    auth.Options
		headers map[string]string
		wantOK  bool
		reason  string
	}{
		{"CertOnly", auth.Options{ClientCertEnabled: true, AllowUnknownCA: true}, nil, false, "no client certificate over plain http"},
		{"BothDisabled", auth.Options{}, nil, true, "authentication disabled"},
		{"SASKeyOverHTTP", auth.Options{ClientCertEnabled: true, SASKeysEnabled: true, Key1: key1},
			map[string]string{auth.HeaderSASKey: key1}, true, "sas key"},
		{"NeitherOverHTTP", auth.Options{ClientCertEnabled: true, SASKeysEnabled: true, Key1: key1}, nil, false,
			"no sas key or token; no client certificate over plain http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(authHandler(auth.New(tt.opts)))
			defer srv.Close()
			got := MustCall(t, srv.URL+"/topics/t1/events", nil, tt.headers)
			if got.OK != tt.wantOK || got.Reason != tt.reason {
				t.Fatalf("Authenticate = %+v, want ok %v reason %q", got, tt.wantOK, tt.reason)
			}
		})
	}
}

// TestAuthenticate_BothMethods: SAS is checked first; either method passing
// is enough.
func TestAuthenticate_BothMethods(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	trusted := ca.Issue(t, "client", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	untrusted := testpki.SelfSigned(t, "client")
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, Key2: key2,
		ClientCertEnabled: true, Trust: certs.NewTrustBundle(ca.Cert)})
	url := MustServeAuth(t, a)
	token := func() string { // a token for this server's endpoint
		return auth.GenerateSASToken(url, time.Now().Add(time.Hour), key2)
	}
	tests := []struct {
		name    string
		cert    *tls.Certificate
		headers map[string]string
		wantOK  bool
		reason  string
	}{
		{"KeyOnly", nil, map[string]string{auth.HeaderSASKey: key1}, true, "sas key"},
		{"TokenOnly", nil, map[string]string{auth.HeaderSASToken: token()}, true, "sas token"},
		{"CertOnly", &trusted, nil, true, "client certificate trusted"},
		{"WrongKeyTrustedCert", &trusted, map[string]string{auth.HeaderSASKey: "wrong"}, true, "client certificate trusted"},
		{"KeyAndUntrustedCert", &untrusted, map[string]string{auth.HeaderSASKey: key2}, true, "sas key"},
		{"WrongKeyUntrustedCert", &untrusted, map[string]string{auth.HeaderSASKey: "wrong"}, false,
			"sas key mismatch; client certificate not trusted"},
		{"Nothing", nil, nil, false, "no sas key or token; no client certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MustCall(t, url, tt.cert, tt.headers)
			if got.OK != tt.wantOK || got.Reason != tt.reason {
				t.Fatalf("Authenticate = %+v, want ok %v reason %q", got, tt.wantOK, tt.reason)
			}
			for _, v := range tt.headers {
				assertNoSecret(t, got.Reason, v, key1, key2)
			}
			if strings.Contains(got.Reason, "BEGIN") {
				t.Fatalf("reason %q holds certificate material", got.Reason)
			}
		})
	}
}

// TestAuthenticate_TrustRefresh: a chain verified earlier is no longer
// trusted once the trust bundle stops holding its CA (verified chains are
// remembered per bundle version only).
func TestAuthenticate_TrustRefresh(t *testing.T) {
	ca, other := testpki.NewCA(t, "old root"), testpki.NewCA(t, "new root")
	path := filepath.Join(t.TempDir(), "ca.pem")
	testpki.MustWriteFile(t, path, ca.PEM())
	bundle, err := certs.NewFileTrust(path, 10*time.Millisecond, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	go bundle.Run(t.Context())
	defer bundle.Close(context.Background())

	client := ca.Issue(t, "client", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	a := auth.New(auth.Options{ClientCertEnabled: true, Trust: bundle})
	authenticate := func() (string, error) {
		r := httptest.NewRequest("POST", publishURL, nil)
		r.TLS.PeerCertificates = []*x509.Certificate{client.Leaf}
		return a.Authenticate(r)
	}
	for range 2 { // the second answer comes from the verified-chain cache
		if reason, err := authenticate(); err != nil {
			t.Fatalf("Authenticate = %q, %v", reason, err)
		}
	}
	testpki.MustWriteFile(t, path, other.PEM())
	brokertest.Eventually(t, 5*time.Second, func() error {
		if _, err := authenticate(); err == nil {
			return errors.New("still trusted")
		}
		return nil
	})
}
