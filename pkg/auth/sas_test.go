package auth_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/auth"
)

func TestAuthenticate_SASKey(t *testing.T) {
	both := auth.Options{SASKeysEnabled: true, Key1: key1, Key2: key2}
	tests := []struct {
		name   string
		opts   auth.Options
		header string // aeg-sas-key value; empty: no header
		wantOK bool
		reason string
	}{
		{"Key1", both, key1, true, "sas key"},
		{"RotatedKey2", both, key2, true, "sas key"},
		{"Wrong", both, "bm90IHRoZSBrZXk=", false, "sas key mismatch"},
		{"PrefixOfKey", both, key1[:10], false, "sas key mismatch"},
		{"KeyPlusSuffix", both, key1 + "x", false, "sas key mismatch"},
		{"CaseChanged", both, strings.ToLower(key1), false, "sas key mismatch"},
		{"Missing", both, "", false, "no sas key or token"},
		{"OnlyKey2Configured", auth.Options{SASKeysEnabled: true, Key2: key2}, key2, true, "sas key"},
		{"EmptyKeysNeverMatch", auth.Options{SASKeysEnabled: true}, key1, false, "sas key mismatch"},
		{"SASDisabledAndNoCert", auth.Options{}, "", true, "authentication disabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", publishURL, nil)
			if tt.header != "" {
				r.Header.Set(auth.HeaderSASKey, tt.header)
			}
			reason, err := auth.New(tt.opts).Authenticate(r)
			if (err == nil) != tt.wantOK {
				t.Fatalf("Authenticate = %q, %v; want success %v", reason, err, tt.wantOK)
			}
			if err != nil && !errors.Is(err, auth.ErrUnauthorized) {
				t.Fatalf("error %v is not ErrUnauthorized", err)
			}
			if reason != tt.reason {
				t.Fatalf("reason = %q, want %q", reason, tt.reason)
			}
			assertNoSecret(t, reason, key1, key2, tt.header)
		})
	}
}

func TestAuthenticate_SASToken(t *testing.T) {
	hour := now.Add(time.Hour)
	valid := auth.GenerateSASToken(publishURL, hour, key1)
	flip := func(s string, at int) string { // change one character of s at index at
		b := []byte(s)
		if b[at] == 'A' {
			b[at] = 'B'
		} else {
			b[at] = 'A'
		}
		return string(b)
	}
	sigAt := strings.LastIndex(valid, "&s=") + 3
	tests := []struct {
		name   string
		url    string // request URL; default publishURL
		opts   auth.Options
		token  string
		reason string // "" means the token passes
	}{
		{"DotNetDocs", "", auth.Options{}, valid, ""},
		{"DotNetSasBuilder", "", auth.Options{}, sasBuilderToken(endpoint, hour, key1), ""},
		{"JavaScript", "", auth.Options{}, jsToken(endpoint, hour, key1), ""},
		{"JavaScriptNoonHour", "", auth.Options{}, jsToken(endpoint, now.Add(21*time.Minute), key1), ""},
		{"Python", "", auth.Options{}, pyToken(endpoint, hour, key1), ""},
		{"PythonNaiveDatetime", "", auth.Options{}, rawToken(httpUtilityEncode(endpoint), httpUtilityEncode(hour.Format("2006-01-02 15:04:05")), key1), ""},
		{"RFC3339", "", auth.Options{}, rfc3339Token(endpoint, hour, key1), ""},
		{"RFC3339WithOffset", "", auth.Options{}, rawToken(httpUtilityEncode(endpoint), httpUtilityEncode(hour.In(time.FixedZone("", 2*3600)).Format(time.RFC3339)), key1), ""},
		{"SignedWithKey2", "", auth.Options{}, auth.GenerateSASToken(publishURL, hour, key2), ""},
		{"SignedWithUnknownKey", "", auth.Options{}, auth.GenerateSASToken(publishURL, hour, "b3RoZXI="), "sas token signature mismatch"},
		{"RawKey", "", auth.Options{Key1: "not base64 at all!"}, auth.GenerateSASToken(publishURL, hour, "not base64 at all!"), ""},

		{"Expired", "", auth.Options{}, auth.GenerateSASToken(publishURL, now.Add(-time.Second), key1), "sas token expired"},
		{"ExpiresNow", "", auth.Options{}, auth.GenerateSASToken(publishURL, now, key1), "sas token expired"},
		{"ExpiredPython", "", auth.Options{}, pyToken(endpoint, now.Add(-time.Minute), key1), "sas token expired"},
		{"ExpiryUnreadable", "", auth.Options{}, rawToken(httpUtilityEncode(endpoint), "tomorrow", key1), "sas token expiry unreadable"},

		{"TamperedSignature", "", auth.Options{}, flip(valid, sigAt), "sas token signature mismatch"},
		{"TamperedResource", "", auth.Options{}, strings.Replace(valid, "t1", "t2", 1), "sas token signature mismatch"},
		{"TamperedExpiry", "", auth.Options{}, strings.Replace(valid, "e=6%2f5%2f2020", "e=6%2f6%2f2020", 1), "sas token signature mismatch"},
		{"SignatureMissing", "", auth.Options{}, valid[:sigAt], "sas token signature mismatch"},

		{"OtherTopic", "", auth.Options{}, auth.GenerateSASToken("https://eventgridmodule:4438/topics/t2/api/events", hour, key1), "sas token resource mismatch"},
		{"OtherHost", "", auth.Options{}, auth.GenerateSASToken("https://othermodule:4438/topics/t1/api/events", hour, key1), "sas token resource mismatch"},
		{"OtherPort", "", auth.Options{}, auth.GenerateSASToken("https://eventgridmodule:5888/topics/t1/api/events", hour, key1), "sas token resource mismatch"},
		{"HTTPResourceOnHTTPS", "", auth.Options{}, auth.GenerateSASToken("http://eventgridmodule:4438/topics/t1/api/events", hour, key1), "sas token resource mismatch"},
		{"HTTPSResourceOnHTTP", "http://eventgridmodule:4438/topics/t1/api/events", auth.Options{}, valid, "sas token resource mismatch"},
		{"HTTPResourceOnHTTP", "http://eventgridmodule:5888/topics/t1/api/events", auth.Options{}, auth.GenerateSASToken("http://eventgridmodule:5888/topics/t1/api/events", hour, key1), ""},
		{"NotAURL", "", auth.Options{}, auth.GenerateSASToken("t1", hour, key1), "sas token resource mismatch"},
		{"CaseInsensitive", "", auth.Options{}, auth.GenerateSASToken("HTTPS://EventGridModule:4438/Topics/T1/API/Events", hour, key1), ""},
		{"TopicPrefix", "", auth.Options{}, auth.GenerateSASToken("https://eventgridmodule:4438/topics/t1", hour, key1), ""},
		{"TopicPrefixSlash", "", auth.Options{}, auth.GenerateSASToken("https://eventgridmodule:4438/topics/t1/", hour, key1), ""},
		{"HostPrefix", "", auth.Options{}, auth.GenerateSASToken("https://eventgridmodule:4438", hour, key1), ""},
		{"PartialSegment", "", auth.Options{}, auth.GenerateSASToken("https://eventgridmodule:4438/topics/t", hour, key1), "sas token resource mismatch"},
		{"LongerThanRequest", "", auth.Options{}, auth.GenerateSASToken(endpoint+"/more", hour, key1), "sas token resource mismatch"},
		{"EdgeRoute", "https://eventgridmodule:4438/topics/t1/events?api-version=2019-01-01-preview", auth.Options{},
			auth.GenerateSASToken("https://eventgridmodule:4438/topics/t1", hour, key1), ""},
		{"DefaultPort", "https://gateway.example/topics/t1/api/events", auth.Options{},
			auth.GenerateSASToken("https://gateway.example:443/topics/t1/api/events", hour, key1), ""},

		{"Garbage", "", auth.Options{}, "garbage", "sas token malformed"},
		{"NoSignatureField", "", auth.Options{}, "r=x&e=y", "sas token malformed"},
		{"WrongOrder", "", auth.Options{}, "e=1&r=2&s=3", "sas token malformed"},
		{"ExtraField", "", auth.Options{}, strings.Replace(valid, "&e=", "&x=1&e=", 1), "sas token malformed"},
		{"ExtraFieldAfterSignature", "", auth.Options{}, valid + "&skn=x", "sas token malformed"},
	}
	// Every case holds whether the token comes in aeg-sas-token or, as
	// cloud Event Grid also takes it, in "Authorization:
	// SharedAccessSignature <token>".
	for _, via := range []string{"Header", "Authorization"} {
		for _, tt := range tests {
			t.Run(via+"/"+tt.name, func(t *testing.T) {
				opts := tt.opts
				if opts.Key1 == "" {
					opts.Key1, opts.Key2 = key1, key2
				}
				opts.SASKeysEnabled, opts.Now = true, fixedNow
				target := tt.url
				if target == "" {
					target = publishURL
				}
				r := httptest.NewRequest("POST", target, nil)
				if via == "Header" {
					r.Header.Set(auth.HeaderSASToken, tt.token)
				} else {
					r.Header.Set("Authorization", "SharedAccessSignature "+tt.token)
				}
				reason, err := auth.New(opts).Authenticate(r)
				if tt.reason == "" {
					if err != nil {
						t.Fatalf("Authenticate = %q, %v; want success\ntoken %s", reason, err, tt.token)
					}
					if reason != "sas token" {
						t.Fatalf("reason = %q", reason)
					}
					return
				}
				if !errors.Is(err, auth.ErrUnauthorized) || reason != tt.reason {
					t.Fatalf("Authenticate = %q, %v; want %q, ErrUnauthorized", reason, err, tt.reason)
				}
				sig := tt.token[strings.LastIndex(tt.token, "=")+1:]
				assertNoSecret(t, reason, key1, key2, tt.token, sig, opts.Key1)
			})
		}
	}
}

func TestAuthenticate_AuthorizationHeader(t *testing.T) {
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, Now: fixedNow})
	valid := auth.GenerateSASToken(publishURL, now.Add(time.Hour), key1)
	tests := []struct {
		header string
		ok     bool
	}{
		{"SharedAccessSignature " + valid, true},
		{"sharedaccesssignature " + valid, true},
		{"  SharedAccessSignature   " + valid + " ", true},
		{"Bearer " + valid, false},
		{"SharedAccessSignature", false},
		{valid, false},
		{"SharedAccessSignature garbage", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", publishURL, nil)
		r.Header.Set("Authorization", tt.header)
		reason, err := a.Authenticate(r)
		if (err == nil) != tt.ok {
			t.Errorf("Authorization %q: %q, %v; want ok=%v", tt.header, reason, err, tt.ok)
		}
	}
}

func TestAuthenticate_KeyAndToken(t *testing.T) {
	a := auth.New(auth.Options{SASKeysEnabled: true, Key1: key1, Now: fixedNow})
	r := httptest.NewRequest("POST", publishURL, nil)
	r.Header.Set(auth.HeaderSASKey, "wrong")
	r.Header.Set(auth.HeaderSASToken, auth.GenerateSASToken(publishURL, now.Add(time.Minute), key1))
	if reason, err := a.Authenticate(r); err != nil || reason != "sas token" {
		t.Fatalf("wrong key, valid token: %q, %v", reason, err)
	}
	r.Header.Set(auth.HeaderSASToken, "garbage")
	reason, err := a.Authenticate(r)
	if err == nil || reason != "sas key mismatch; sas token malformed" {
		t.Fatalf("wrong key, bad token: %q, %v", reason, err)
	}
}

func TestGenerateSASToken(t *testing.T) {
	// Computed independently from the .NET algorithm (HttpUtility.UrlEncode,
	// en-US DateTime, HMAC-SHA256 with the base64-decoded key).
	const want = "r=https%3a%2f%2feventgridmodule%3a4438%2ftopics%2ft1%2fapi%2fevents%3fapi-version%3d2018-01-01" +
		"&e=6%2f15%2f2017+6%3a20%3a15+PM&s=MEmr2a656jfk8eIv%2fwymxAdCgR8k%2flqh4lDhKLDtX9A%3d"
	got := auth.GenerateSASToken(publishURL, time.Date(2017, 6, 15, 18, 20, 15, 0, time.UTC), key1)
	if got != want {
		t.Fatalf("GenerateSASToken =\n%s\nwant\n%s", got, want)
	}
	// The expiry is written in UTC whatever the time's location.
	local := time.Date(2017, 6, 15, 20, 20, 15, 0, time.FixedZone("CEST", 2*3600))
	if got := auth.GenerateSASToken(publishURL, local, key1); got != want {
		t.Fatalf("GenerateSASToken with a zoned time = %s", got)
	}
	// Midnight and noon in 12-hour form.
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2020, 1, 2, 0, 5, 0, 0, time.UTC), "&e=1%2f2%2f2020+12%3a05%3a00+AM&"},
		{time.Date(2020, 12, 31, 12, 5, 0, 0, time.UTC), "&e=12%2f31%2f2020+12%3a05%3a00+PM&"},
	} {
		if got := auth.GenerateSASToken(publishURL, tc.at, key1); !strings.Contains(got, tc.want) {
			t.Fatalf("GenerateSASToken(%v) = %s, want it to contain %s", tc.at, got, tc.want)
		}
	}
}
