package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Expiry layouts accepted in a token's e= field: what each SDK writes.
var expiryLayouts = []string{
	"1/2/2006 3:04:05 PM",        // .NET DateTime.ToString() en-US, UTC; JavaScript SDK
	"1/2/2006 3:04:05 PM -07:00", // .NET DateTimeOffset.ToString() en-US (EventGridSasBuilder)
	time.RFC3339Nano,             // RFC 3339 (edgegrid extension, docs/design.md#sas-tokens)
	"2006-01-02 15:04:05Z07:00",  // Python str(datetime) with a time zone (fraction optional)
	"2006-01-02 15:04:05",        // Python str(datetime) without one: UTC
}

// GenerateSASToken returns an aeg-sas-token value for resource valid until
// expiry, signed with key, exactly as the .NET SDK builds it
// (EventGridSasBuilder and the cloud docs' BuildSharedAccessSignature):
//
//	r=<enc(resource)>&e=<enc(expiry)>&s=<enc(base64(HMAC-SHA256(key, "r=…&e=…")))>
//
// where enc is System.Web.HttpUtility.UrlEncode (space as '+', lower-case
// hex), expiry is written in UTC as M/d/yyyy h:mm:ss tt, and key is the
// base64 decoding of key (its raw bytes when key is not base64). resource is
// used as given; the SDKs append ?api-version=2018-01-01 (.NET) or
// ?apiVersion=2018-01-01 (JavaScript, Python) to the endpoint.
func GenerateSASToken(resource string, expiry time.Time, key string) string {
	unsigned := "r=" + dotnetURLEncode(resource) + "&e=" + dotnetURLEncode(expiry.UTC().Format(expiryLayouts[0]))
	return unsigned + "&s=" + dotnetURLEncode(sign(signingKey(key), unsigned))
}

// signingKey is the HMAC key for an Event Grid key: its base64 decoding
// (padded or not), or its raw bytes when it is not base64
// (docs/design.md#sas-tokens).
func signingKey(key string) []byte {
	if b, err := base64.StdEncoding.DecodeString(key); err == nil && len(b) > 0 {
		return b
	}
	if b, err := base64.RawStdEncoding.DecodeString(key); err == nil && len(b) > 0 {
		return b
	}
	return []byte(key)
}

func sign(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// verifyToken checks an aeg-sas-token and returns the path of the resource
// it was signed for (without a trailing '/'; "" for the root), or the
// reason it is not valid for r: malformed, wrongly signed, expired, or
// signed for another scheme or host. Whether the resource reaches what r
// acts on is Grant.Permit's to say. The signature is checked over the
// r=…&e= prefix exactly as the client sent it, so any URL encoding the
// client chose works; the decoded values are read with query unescaping
// ('+' is a space, hex of either case).
func (a *Authenticator) verifyToken(r *http.Request, token string) (resource, reason string) {
	i := strings.LastIndex(token, "&s=")
	if i < 0 || !strings.HasPrefix(token, "r=") {
		return "", "sas token malformed"
	}
	signed, sigEnc := token[:i], token[i+len("&s="):]
	j := strings.Index(signed, "&e=")
	if j < 0 {
		return "", "sas token malformed"
	}
	resEnc, expEnc := signed[len("r="):j], signed[j+len("&e="):]
	if strings.Contains(resEnc, "&") || strings.Contains(expEnc, "&") || strings.Contains(sigEnc, "&") {
		return "", "sas token malformed"
	}
	if !a.validSignature(signed, sigEnc) {
		return "", "sas token signature mismatch"
	}
	res, err1 := url.QueryUnescape(resEnc)
	expiry, err2 := url.QueryUnescape(expEnc)
	if err1 != nil || err2 != nil {
		return "", "sas token malformed"
	}
	exp, ok := parseExpiry(expiry)
	if !ok {
		return "", "sas token expiry unreadable"
	}
	if !a.now().Before(exp) {
		return "", "sas token expired"
	}
	path, ok := resourcePath(res, r)
	if !ok {
		return "", "sas token resource mismatch"
	}
	return path, ""
}

// validSignature reports whether sigEnc is the signature of signed under one
// of the configured keys. The signature is base64, whose '+' a client may
// have sent escaped (%2B) or, against the rules, raw; both readings are
// tried. Every key is checked, in constant time per comparison.
func (a *Authenticator) validSignature(signed, sigEnc string) bool {
	var sigs [][]byte
	for _, unescape := range []func(string) (string, error){url.QueryUnescape, url.PathUnescape} {
		s, err := unescape(sigEnc)
		if err != nil {
			continue
		}
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			sigs = append(sigs, b)
		}
	}
	ok := false
	for _, key := range a.signingKeys {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(signed))
		want := m.Sum(nil)
		for _, sig := range sigs {
			if hmac.Equal(sig, want) {
				ok = true
			}
		}
	}
	return ok
}

func parseExpiry(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range expiryLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// resourcePath returns the path of a token's resource, without its query
// and trailing '/', when the resource is a URL of r's scheme and host
// (compared case-insensitively, a default port written or not).
func resourcePath(resource string, r *http.Request) (string, bool) {
	u, err := url.Parse(resource)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if !strings.EqualFold(u.Scheme, scheme) || !strings.EqualFold(canonicalHost(u.Host, scheme), canonicalHost(r.Host, scheme)) {
		return "", false
	}
	return strings.TrimSuffix(u.Path, "/"), true
}

// canonicalHost drops the scheme's default port.
func canonicalHost(host, scheme string) string {
	switch {
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		return strings.TrimSuffix(host, ":443")
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		return strings.TrimSuffix(host, ":80")
	}
	return host
}

// dotnetURLEncode is System.Web.HttpUtility.UrlEncode: letters, digits and
// -_.!*() stay, a space becomes '+', every other byte of the UTF-8 text
// becomes %xx in lower-case hex.
func dotnetURLEncode(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) * 3 / 2)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '!', c == '*', c == '(', c == ')':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}
