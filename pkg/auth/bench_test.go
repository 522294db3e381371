package auth_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

func BenchmarkAuthenticate(b *testing.B) {
	ca := testpki.NewCA(b, "edge root")
	client := ca.Issue(b, "client", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, Key2: key2,
		ClientCertEnabled: true, Trust: certs.NewTrustBundle(ca.Cert)})
	token := auth.GenerateSASToken(publishURL, time.Now().Add(time.Hour), key2)
	cases := []struct {
		name   string
		header string
		value  string
	}{
		{"SASKey", auth.HeaderSASKey, key2},
		{"SASToken", auth.HeaderSASToken, token},
		{"ClientCert", "", ""},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest("POST", publishURL, nil)
			if bc.header != auth.HeaderSASToken {
				// A trusted certificate would pass before the token is
				// looked at.
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{client.Leaf}}
			}
			if bc.header != "" {
				r.Header.Set(bc.header, bc.value)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Authenticate(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
