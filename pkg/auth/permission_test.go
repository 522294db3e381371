package auth_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// A key and a certificate hold every permission everywhere; a token holds
// publish, receive and scrape on what lies below its resource, is no
// credential (401) for what does not, and gets 403 for read and manage
// below it.
func TestGrant_Permit(t *testing.T) {
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, ClientCertEnabled: true, AllowUnknownCA: true})
	const host = "https://eventgridmodule:4438"
	hour := time.Now().Add(time.Hour)
	stranger := testpki.SelfSigned(t, "client")
	leaf, err := x509.ParseCertificate(stranger.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, header, value string, cert bool) auth.Grant {
		t.Helper()
		r := httptest.NewRequest("POST", host+"/topics/t1/events", nil)
		if header != "" {
			r.Header.Set(header, value)
		}
		if cert {
			r.TLS.PeerCertificates = []*x509.Certificate{leaf}
		}
		g, reason, err := a.Check(r)
		if err != nil {
			t.Fatalf("Check = %q, %v", reason, err)
		}
		return g
	}
	const (
		ok        = 0
		refused   = 401
		forbidden = 403
	)
	// Every permission on these resources, in the order of auth.Permissions:
	// publish, receive, scrape, read, manage.
	resources := []string{"/topics/t1/events", "/topics/t1/api/events", "/topics/t1", "/topics/t1/eventSubscriptions/s1", "/topics/t2/events", "/topics", "/metrics"}
	tests := []struct {
		name  string
		grant auth.Grant
		cred  string
		want  map[string][5]int // by resource, by permission
	}{
		{"Key", check(t, auth.HeaderSASKey, key1, false), auth.CredentialSASKey, nil},
		{"Certificate", check(t, "", "", true), auth.CredentialClientCertificate, nil},
		{"PublishURLToken", check(t, auth.HeaderSASToken, auth.GenerateSASToken(host+"/topics/t1/events?api-version=2019-01-01", hour, key1), false),
			auth.CredentialSASToken, map[string][5]int{
				"/topics/t1/events": {ok, ok, ok, forbidden, forbidden},
			}},
		{"CloudPathToken", check(t, auth.HeaderSASToken, auth.GenerateSASToken(host+"/topics/t1/api/events?api-version=2018-01-01", hour, key1), false),
			auth.CredentialSASToken, map[string][5]int{
				"/topics/t1/api/events": {ok, ok, ok, forbidden, forbidden},
			}},
		{"TopicToken", check(t, auth.HeaderSASToken, auth.GenerateSASToken(host+"/Topics/T1/", hour, key1), false),
			auth.CredentialSASToken, map[string][5]int{
				"/topics/t1/events":                {ok, ok, ok, forbidden, forbidden},
				"/topics/t1/api/events":            {ok, ok, ok, forbidden, forbidden},
				"/topics/t1":                       {ok, ok, ok, forbidden, forbidden},
				"/topics/t1/eventSubscriptions/s1": {ok, ok, ok, forbidden, forbidden},
			}},
		{"SubscriptionToken", check(t, auth.HeaderSASToken, auth.GenerateSASToken(host+"/topics/t1/eventsubscriptions/s1", hour, key1), false),
			auth.CredentialSASToken, map[string][5]int{
				"/topics/t1/eventSubscriptions/s1": {ok, ok, ok, forbidden, forbidden},
			}},
		{"MetricsToken", check(t, auth.HeaderSASToken, auth.GenerateSASToken(host+"/metrics", hour, key1), false),
			auth.CredentialSASToken, map[string][5]int{
				"/metrics": {ok, ok, ok, forbidden, forbidden},
			}},
		{"RootToken", check(t, auth.HeaderSASToken, auth.GenerateSASToken(host, hour, key1), false),
			auth.CredentialSASToken, map[string][5]int{
				"/topics/t1/events":                {ok, ok, ok, forbidden, forbidden},
				"/topics/t1/api/events":            {ok, ok, ok, forbidden, forbidden},
				"/topics/t1":                       {ok, ok, ok, forbidden, forbidden},
				"/topics/t1/eventSubscriptions/s1": {ok, ok, ok, forbidden, forbidden},
				"/topics/t2/events":                {ok, ok, ok, forbidden, forbidden},
				"/topics":                          {ok, ok, ok, forbidden, forbidden},
				"/metrics":                         {ok, ok, ok, forbidden, forbidden},
			}},
		{"Nothing", auth.Grant{}, "", map[string][5]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.grant.Credential(); got != tt.cred {
				t.Errorf("Credential() = %q, want %q", got, tt.cred)
			}
			if got := tt.grant.HoldsAll(); got != (tt.want == nil) {
				t.Errorf("HoldsAll() = %v", got)
			}
			for _, res := range resources {
				want, listed := tt.want[res]
				if !listed && tt.want != nil {
					want = [5]int{refused, refused, refused, refused, refused}
				}
				for i, p := range auth.Permissions {
					reason, err := tt.grant.Permit(p, res)
					got := ok
					var f *auth.Failure
					var d *auth.Denied
					switch {
					case errors.As(err, &f):
						got = refused
					case errors.As(err, &d):
						got = forbidden
						if d.Permission != p || !strings.Contains(d.Message(), "needs the "+string(p)+" permission") {
							t.Errorf("%s on %s: %+v %q", p, res, d, d.Message())
						}
					case err != nil:
						t.Fatalf("%s on %s: %v is neither a Failure nor a Denied", p, res, err)
					}
					if got != want[i] {
						t.Errorf("Permit(%s, %s) = %d (%q), want %d", p, res, got, reason, want[i])
					}
				}
			}
		})
	}
}

// A 401 names the kinds of credential the broker takes, in its message and
// in its WWW-Authenticate challenges, and which was missing or refused; a
// 403 names the permission and what would hold it. Neither repeats a
// credential.
func TestRefusal_SaysWhatIsAccepted(t *testing.T) {
	stranger := testpki.SelfSigned(t, "stranger")
	leaf, err := x509.ParseCertificate(stranger.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	certOnly := auth.Options{ClientCertEnabled: true}
	keysOnly := auth.Options{SASKeysEnabled: true, Key1: key1}
	both := auth.Options{SASKeysEnabled: true, Key1: key1, ClientCertEnabled: true}
	expired := auth.GenerateSASToken(publishURL, time.Now().Add(-time.Minute), key1)
	tests := []struct {
		name       string
		opts       auth.Options
		plain      bool // plain HTTP: no TLS
		cert       bool // present the stranger's certificate
		header     []string
		message    string
		challenges []string
	}{
		{"CertOnlyNonePresented", certOnly, false, false, nil,
			"The request is not authorized: this broker takes client certificates only, and no client certificate was presented.",
			[]string{`ClientCertificate error="missing"`}},
		{"CertOnlyKeyPresented", certOnly, false, false, []string{auth.HeaderSASKey, key1},
			"The request is not authorized: this broker takes client certificates only, and no client certificate was presented; the SAS key or token presented was not considered: SAS keys are off on this broker.",
			[]string{`ClientCertificate error="missing"`}},
		{"CertOnlyPlainHTTP", certOnly, true, false, nil,
			"The request is not authorized: this broker takes client certificates only, and no client certificate can be presented over plain HTTP.",
			[]string{`ClientCertificate error="missing"`}},
		{"CertOnlyUntrusted", certOnly, false, true, nil,
			"The request is not authorized: this broker takes client certificates only, and the client certificate presented was not issued by a CA this broker trusts.",
			[]string{`ClientCertificate error="refused"`}},
		{"KeysOnlyNothing", keysOnly, false, false, nil,
			"The request is not authorized: this broker takes SAS keys only: an aeg-sas-key (or Authorization: SharedAccessKey) or a SAS token (aeg-sas-token, or Authorization: SharedAccessSignature), and no aeg-sas-key or SAS token was presented.",
			[]string{`SharedAccessKey header="aeg-sas-key", error="missing"`, `SharedAccessSignature header="aeg-sas-token", error="missing"`}},
		{"KeysOnlyWrongKey", keysOnly, false, false, []string{auth.HeaderSASKey, "bm90IHRoZSBrZXk="},
			"The request is not authorized: this broker takes SAS keys only: an aeg-sas-key (or Authorization: SharedAccessKey) or a SAS token (aeg-sas-token, or Authorization: SharedAccessSignature), and the aeg-sas-key presented is not one of this broker's keys.",
			[]string{`SharedAccessKey header="aeg-sas-key", error="refused"`, `SharedAccessSignature header="aeg-sas-token", error="missing"`}},
		{"KeysOnlyExpiredToken", keysOnly, false, false, []string{auth.HeaderSASToken, expired},
			"The request is not authorized: this broker takes SAS keys only: an aeg-sas-key (or Authorization: SharedAccessKey) or a SAS token (aeg-sas-token, or Authorization: SharedAccessSignature), and the SAS token presented has expired.",
			[]string{`SharedAccessKey header="aeg-sas-key", error="missing"`, `SharedAccessSignature header="aeg-sas-token", error="refused"`}},
		{"BothWrongKeyUntrustedCert", both, false, true, []string{auth.HeaderSASKey, "bm90IHRoZSBrZXk="},
			"The request is not authorized: this broker takes a client certificate, an aeg-sas-key (or Authorization: SharedAccessKey) or a SAS token (aeg-sas-token, or Authorization: SharedAccessSignature), and the client certificate presented was not issued by a CA this broker trusts; the aeg-sas-key presented is not one of this broker's keys.",
			[]string{`ClientCertificate error="refused"`, `SharedAccessKey header="aeg-sas-key", error="refused"`, `SharedAccessSignature header="aeg-sas-token", error="missing"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", publishURL, nil)
			if tt.plain {
				r.TLS = nil
			} else if tt.cert {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
			}
			for i := 0; i+1 < len(tt.header); i += 2 {
				r.Header.Set(tt.header[i], tt.header[i+1])
			}
			_, _, err := auth.New(tt.opts).Check(r)
			var f *auth.Failure
			if !errors.As(err, &f) {
				t.Fatalf("Check error %v, want a Failure", err)
			}
			if got := f.Message(); got != tt.message {
				t.Errorf("message\n%s\nwant\n%s", got, tt.message)
			}
			if got := f.Challenges(); strings.Join(got, "|") != strings.Join(tt.challenges, "|") {
				t.Errorf("challenges %q, want %q", got, tt.challenges)
			}
			assertNoSecret(t, f.Message()+strings.Join(f.Challenges(), ""), key1, expired)
		})
	}

	t.Run("TokenForAnotherResource", func(t *testing.T) {
		r := httptest.NewRequest("POST", publishURL, nil)
		token := auth.GenerateSASToken("https://eventgridmodule:4438/topics/t2/events", time.Now().Add(time.Hour), key1)
		r.Header.Set(auth.HeaderSASToken, token)
		g, _, err := auth.New(both).Check(r)
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Permit(auth.Publish, "/topics/t1/events")
		var f *auth.Failure
		if !errors.As(err, &f) || f.Kind != auth.FailSASToken {
			t.Fatalf("Permit = %v, want a Failure of kind sas_token", err)
		}
		if !strings.HasSuffix(f.Message(), ", and the SAS token presented was signed for another resource than /topics/t1/events.") {
			t.Errorf("message %q", f.Message())
		}
		if got := f.Challenges(); len(got) != 3 || got[2] != `SharedAccessSignature header="aeg-sas-token", error="refused"` {
			t.Errorf("challenges %q", got)
		}
		assertNoSecret(t, f.Message(), token, key1)
	})

	t.Run("Denied", func(t *testing.T) {
		for _, tc := range []struct {
			opts auth.Options
			use  string
		}{
			{both, "Use an aeg-sas-key or a client certificate."},
			{keysOnly, "Use an aeg-sas-key."},
		} {
			r := httptest.NewRequest("GET", publishURL, nil)
			r.Header.Set(auth.HeaderSASToken, auth.GenerateSASToken(publishURL, time.Now().Add(time.Hour), key1))
			g, _, err := auth.New(tc.opts).Check(r)
			if err != nil {
				t.Fatal(err)
			}
			_, err = g.Permit(auth.Read, "/topics/t1/api/events")
			var d *auth.Denied
			if !errors.As(err, &d) || d.AuthFailureReason() != auth.FailPermission || errors.Is(err, auth.ErrUnauthorized) {
				t.Fatalf("Permit = %v, want a Denied", err)
			}
			if msg := d.Message(); !strings.HasPrefix(msg, "This route needs the read permission, which a SAS token does not hold") || !strings.HasSuffix(msg, tc.use) {
				t.Errorf("message %q, want it to end %q", msg, tc.use)
			}
		}
	})
}

// With a trusted certificate and a token both presented, the certificate
// is what the request holds: everything, not the token's little.
func TestCheck_StrongestCredentialWins(t *testing.T) {
	stranger := testpki.SelfSigned(t, "client")
	leaf, err := x509.ParseCertificate(stranger.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, ClientCertEnabled: true, AllowUnknownCA: true})
	r := httptest.NewRequest("GET", publishURL, nil)
	r.TLS.PeerCertificates = []*x509.Certificate{leaf}
	r.Header.Set(auth.HeaderSASToken, auth.GenerateSASToken(publishURL, time.Now().Add(time.Hour), key1))
	g, reason, err := a.Check(r)
	if err != nil || !g.HoldsAll() || g.Credential() != auth.CredentialClientCertificate {
		t.Fatalf("Check = %+v, %q, %v; want the certificate's grant", g, reason, err)
	}
}

// FuzzGrantPermit signs tokens for arbitrary resources and asks for every
// permission on arbitrary paths: a token is never good for reading or
// managing, publishes and receives exactly where its resource lies above
// the path, and is a 403 (never a pass) where it lies above but cannot.
func FuzzGrantPermit(f *testing.F) {
	f.Add("https://h/topics/t/events", "/topics/t/events")
	f.Add("https://h", "/topics")
	f.Add("https://h/topics/t", "/topics/t/eventSubscriptions/s")
	f.Add("https://h/Topics/T/", "/topics/t2")
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, Now: func() time.Time { return fuzzNow }})
	f.Fuzz(func(t *testing.T, resource, path string) {
		r := httptest.NewRequest("POST", "https://h/", nil)
		r.Header.Set(auth.HeaderSASToken, auth.GenerateSASToken(resource, fuzzNow.Add(time.Hour), key1))
		g, _, err := a.Check(r)
		if err != nil {
			return // not a URL of this broker
		}
		if g.HoldsAll() || g.Credential() != auth.CredentialSASToken {
			t.Fatalf("a token's grant %+v", g)
		}
		reaches := covers(resource, path)
		for _, p := range auth.Permissions {
			_, err := g.Permit(p, path)
			var d *auth.Denied
			switch {
			case !reaches && !errors.Is(err, auth.ErrUnauthorized):
				t.Fatalf("token for %q, %s on %q: %v, want 401", resource, p, path, err)
			case reaches && auth.TokenHolds(p) && err != nil:
				t.Fatalf("token for %q, %s on %q: %v, want a pass", resource, p, path, err)
			case reaches && !auth.TokenHolds(p) && !errors.As(err, &d):
				t.Fatalf("token for %q, %s on %q: %v, want 403", resource, p, path, err)
			}
		}
	})
}
