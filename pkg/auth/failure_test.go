package auth_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// A refusal names the first credential refused, in the order SAS key, SAS
// token, client certificate, or that none was presented.
func TestAuthenticate_FailureKind(t *testing.T) {
	stranger := testpki.SelfSigned(t, "stranger")
	strict := auth.Options{SASKeysEnabled: true, Key1: key1, ClientCertEnabled: true, Now: fixedNow}
	expired := auth.GenerateSASToken(publishURL, now.Add(-time.Minute), key1)
	tests := []struct {
		name    string
		key     string
		token   string
		cert    *tls.Certificate
		tlsConn bool
		want    string
	}{
		{"Nothing", "", "", nil, false, auth.FailNoCredentials},
		{"NothingOverTLS", "", "", nil, true, auth.FailNoCredentials},
		{"WrongKey", "bm90IHRoZSBrZXk=", "", nil, false, auth.FailSASKey},
		{"ExpiredToken", "", expired, nil, false, auth.FailSASToken},
		{"MalformedToken", "", "garbage", nil, false, auth.FailSASToken},
		{"WrongKeyAndToken", "bm90IHRoZSBrZXk=", expired, nil, false, auth.FailSASKey},
		{"UntrustedCert", "", "", &stranger, true, auth.FailClientCertificate},
		{"UntrustedCertAndWrongKey", "bm90IHRoZSBrZXk=", "", &stranger, true, auth.FailSASKey},
	}
	a := auth.New(strict)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", publishURL, nil)
			if tt.key != "" {
				r.Header.Set(auth.HeaderSASKey, tt.key)
			}
			if tt.token != "" {
				r.Header.Set(auth.HeaderSASToken, tt.token)
			}
			if tt.tlsConn {
				r.TLS = &tls.ConnectionState{}
				if tt.cert != nil {
					leaf, err := x509.ParseCertificate(tt.cert.Certificate[0])
					if err != nil {
						t.Fatal(err)
					}
					r.TLS.PeerCertificates = []*x509.Certificate{leaf}
				}
			}
			reason, err := a.Authenticate(r)
			if !errors.Is(err, auth.ErrUnauthorized) {
				t.Fatalf("Authenticate = %q, %v; want ErrUnauthorized", reason, err)
			}
			var f *auth.Failure
			if !errors.As(err, &f) || f.Kind != tt.want {
				t.Fatalf("failure %v, want kind %s", err, tt.want)
			}
			assertNoSecret(t, err.Error(), key1, tt.key, tt.token)
		})
	}
}
