package auth_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Keys as Event Grid issues them: base64 of random bytes.
const (
	key1 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	key2 = "ZWRnZWdyaWQgc2Vjb25kIGtleSBmb3IgdGVzdHMgISE="
)

// The endpoint the SDKs publish to, and what a request to it looks like.
const (
	endpoint   = "https://eventgridmodule:4438/topics/t1/api/events"
	publishURL = endpoint + "?api-version=2018-01-01"
)

// now is the tests' fixed clock: 5 June 2020, 12:09:03 UTC.
var now = time.Date(2020, 6, 5, 12, 9, 3, 0, time.UTC)

func fixedNow() time.Time { return now }

// The following builders are written from the SDKs' sources, independently
// of the package, so that the verifier is checked against each client's
// encoding.

// jsToken builds a token like @azure/eventgrid generateSharedAccessSignature:
// encodeURIComponent, resource endpoint?apiVersion=2018-01-01, expiry
// M/d/yyyy h:mm:ss AM|PM in UTC.
func jsToken(endpoint string, expiry time.Time, key string) string {
	e := expiry.UTC()
	hour := e.Hour() % 12
	if hour == 0 {
		hour = 12
	}
	ampm := "AM"
	if e.Hour() >= 12 {
		ampm = "PM"
	}
	exp := fmt.Sprintf("%d/%d/%d %d:%02d:%02d %s", int(e.Month()), e.Day(), e.Year(), hour, e.Minute(), e.Second(), ampm)
	unsigned := "r=" + percentEncode(endpoint+"?apiVersion=2018-01-01", "-_.!~*'()") + "&e=" + percentEncode(exp, "-_.!~*'()")
	return unsigned + "&s=" + percentEncode(hmacBase64(key, unsigned), "-_.!~*'()")
}

// pyToken builds a token like azure-eventgrid generate_sas: quote() with
// safe="~()*!.'", resource endpoint?apiVersion=2018-01-01, expiry
// str(datetime) of an aware UTC datetime with microseconds.
func pyToken(endpoint string, expiry time.Time, key string) string {
	exp := expiry.UTC().Format("2006-01-02 15:04:05.000000-07:00")
	const safe = "_.-~()*!'"
	unsigned := "r=" + percentEncode(endpoint+"?apiVersion=2018-01-01", safe) + "&e=" + percentEncode(exp, safe)
	return unsigned + "&s=" + percentEncode(hmacBase64(key, unsigned), safe)
}

// sasBuilderToken builds a token like Azure.Messaging.EventGrid's
// EventGridSasBuilder: HttpUtility.UrlEncode, resource
// endpoint?api-version=2018-01-01, expiry DateTimeOffset.ToString() en-US
// ("6/5/2020 1:09:03 PM +00:00").
func sasBuilderToken(endpoint string, expiry time.Time, key string) string {
	exp := expiry.UTC().Format("1/2/2006 3:04:05 PM -07:00")
	unsigned := "r=" + httpUtilityEncode(endpoint+"?api-version=2018-01-01") + "&e=" + httpUtilityEncode(exp)
	return unsigned + "&s=" + httpUtilityEncode(hmacBase64(key, unsigned))
}

// rfc3339Token builds a token whose expiry is RFC 3339 (edgegrid extension).
func rfc3339Token(resource string, expiry time.Time, key string) string {
	unsigned := "r=" + percentEncode(resource, "-_.~") + "&e=" + percentEncode(expiry.UTC().Format(time.RFC3339), "-_.~")
	return unsigned + "&s=" + percentEncode(hmacBase64(key, unsigned), "-_.~")
}

// rawToken signs "r=<resource>&e=<expiry>" with the values as given.
func rawToken(resource, expiry, key string) string {
	unsigned := "r=" + resource + "&e=" + expiry
	return unsigned + "&s=" + percentEncode(hmacBase64(key, unsigned), "")
}

func hmacBase64(key, s string) string {
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		k = []byte(key)
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// percentEncode keeps ASCII letters, digits and the characters in safe and
// writes every other byte as %XX, upper case, like encodeURIComponent and
// Python's quote.
func percentEncode(s, safe string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(safe, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// httpUtilityEncode is System.Web.HttpUtility.UrlEncode.
func httpUtilityEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!*()", c) >= 0:
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return b.String()
}

// assertNoSecret fails tb when reason contains any of the secrets.
func assertNoSecret(tb testing.TB, reason string, secrets ...string) {
	tb.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(reason, s) {
			tb.Fatalf("reason %q contains a secret", reason)
		}
	}
}
