package auth_test

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/auth"
)

// fuzzNow is the fixed time of the fuzz targets' authenticators.
var fuzzNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// FuzzSASCredentials presents arbitrary aeg-sas-key, aeg-sas-token and
// Authorization values: authentication never panics, a failure is a
// *Failure, no reason repeats a credential, and the header and Authorization
// forms of one credential agree. A key passes only when it is a configured
// one.
func FuzzSASCredentials(f *testing.F) {
	good := auth.GenerateSASToken("https://h/topics/t/api/events?api-version=2018-01-01", fuzzNow.Add(time.Hour), key1)
	for _, s := range [][3]string{
		{key1, "", ""}, {"", good, ""}, {"", "", "SharedAccessSignature " + good}, {"", "", "sharedaccesskey " + key2},
		{"x", "r=&e=&s=", "Bearer x"}, {"", "r=a&e=1/2/2006 3:04:05 PM&s=%zz", ""}, {"", strings.Replace(good, "&s=", "&s=A", 1), ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, Key2: key2, Now: func() time.Time { return fuzzNow }})
	check := func(t *testing.T, header http.Header) (bool, string) {
		t.Helper()
		r := httptest.NewRequest("POST", "https://h/topics/t/api/events?api-version=2018-01-01", nil)
		r.TLS = &tls.ConnectionState{}
		for k, v := range header {
			r.Header[k] = v
		}
		reason, err := a.Authenticate(r)
		var fail *auth.Failure
		if err != nil && (!errors.As(err, &fail) || !errors.Is(err, auth.ErrUnauthorized)) {
			t.Fatalf("Authenticate error %v is not a Failure", err)
		}
		for _, vs := range header {
			for _, v := range vs {
				if len(v) >= 8 && strings.Contains(reason, v) {
					t.Fatalf("the reason %q repeats the credential %q", reason, v)
				}
			}
		}
		return err == nil, reason
	}
	f.Fuzz(func(t *testing.T, key, token, authorization string) {
		h := http.Header{}
		if key != "" {
			h.Set(auth.HeaderSASKey, key)
		}
		if token != "" {
			h.Set(auth.HeaderSASToken, token)
		}
		if authorization != "" {
			h.Set("Authorization", authorization)
		}
		ok, _ := check(t, h)
		if ok && key != key1 && key != key2 && token == "" && authorization == "" {
			t.Fatalf("the key %q passes", key)
		}
		if token != "" && key == "" && authorization == "" && validHeader(token) {
			viaAuth, _ := check(t, http.Header{"Authorization": {"SharedAccessSignature " + token}})
			if strings.TrimSpace(token) == token && viaAuth != ok {
				t.Fatalf("token %q: aeg-sas-token says %v, Authorization says %v", token, ok, viaAuth)
			}
		}
	})
}

// validHeader reports whether v can be sent as a header value unchanged.
func validHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// FuzzSASTokenRoundTrip signs tokens for arbitrary resources, expiries and
// keys the way the SDKs do and presents them: a token passes exactly when
// it has not expired and its resource, without its query, is the request's
// endpoint or a prefix of it at a segment boundary.
func FuzzSASTokenRoundTrip(f *testing.F) {
	f.Add("https://h/topics/t/api/events?api-version=2018-01-01", int64(3600), key1, "/topics/t/api/events")
	f.Add("https://H:443/TOPICS/t", int64(1), "not base64 ~", "/topics/t/events")
	f.Add("https://h/topics/t2", int64(60), key1, "/topics/t")
	f.Add("http://h/", int64(-1), key1, "/topics/t")
	f.Add("https://h/a b+c%/é", int64(86400*365), "", "/a b+c%/é/x")
	f.Fuzz(func(t *testing.T, resource string, seconds int64, key, path string) {
		if key == "" || seconds < -1e9 || seconds > 1e9 || !strings.HasPrefix(path, "/") {
			return
		}
		a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key, Now: func() time.Time { return fuzzNow }})
		expiry := fuzzNow.Add(time.Duration(seconds) * time.Second)
		r := httptest.NewRequest("POST", "https://h/", nil)
		r.URL.Path, r.TLS = path, &tls.ConnectionState{}
		r.Header.Set(auth.HeaderSASToken, auth.GenerateSASToken(resource, expiry, key))
		_, err := a.Authenticate(r)
		if want := seconds > 0 && covers(resource, path); (err == nil) != want {
			t.Fatalf("token for %q expiring in %ds, request to %q: passed %v, want %v", resource, seconds, path, err == nil, want)
		}
	})
}

// covers is the rule the tokens' resources follow, written out again.
func covers(resource, path string) bool {
	u, err := url.Parse(resource)
	if err != nil || !strings.EqualFold(u.Scheme, "https") {
		return false
	}
	if h := strings.ToLower(strings.TrimSuffix(u.Host, ":443")); h != "h" {
		return false
	}
	prefix := strings.ToLower(strings.TrimSuffix(u.Path, "/"))
	p := strings.ToLower(path)
	return prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/")
}
