package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/edgegrid/edgegrid/pkg/certs"
)

// ErrUnauthorized is returned by Authenticate when a request passes no
// enabled check. The HTTP layer answers it with 401.
var ErrUnauthorized = errors.New("auth: unauthorized")

// Kinds of authentication failure: which credential was refused, or that
// none was presented. They are few and fixed, so they can label a metric.
const (
	// FailNoCredentials: no SAS key or token, and no client certificate.
	FailNoCredentials = "no_credentials"
	// FailSASKey: an aeg-sas-key that matches no configured key.
	FailSASKey = "sas_key"
	// FailSASToken: a SAS token that is malformed, expired, for another
	// resource or wrongly signed.
	FailSASToken = "sas_token"
	// FailClientCertificate: a client certificate that is expired, not for
	// client authentication or not trusted.
	FailClientCertificate = "client_certificate"
)

// FailureKinds lists every kind of failure.
var FailureKinds = []string{FailNoCredentials, FailSASKey, FailSASToken, FailClientCertificate}

// Failure is the error of a refused request. errors.Is(err,
// ErrUnauthorized) holds for it.
type Failure struct {
	// Kind is one of the Fail* constants: the first credential presented
	// that was refused, in the order SAS key, SAS token, client
	// certificate.
	Kind string
}

func (f *Failure) Error() string { return "auth: unauthorized (" + f.Kind + ")" }

// Is makes a Failure match ErrUnauthorized.
func (f *Failure) Is(target error) bool { return target == ErrUnauthorized }

// AuthFailureReason returns Kind; the HTTP layer reads it through an
// interface, without importing this package.
func (f *Failure) AuthFailureReason() string { return f.Kind }

// Header names of the SAS credentials.
const (
	HeaderSASKey   = "aeg-sas-key"
	HeaderSASToken = "aeg-sas-token"
)

// Options configures an Authenticator (docs/security.md#client-authentication).
type Options struct {
	// SASKeysEnabled turns on the aeg-sas-key and aeg-sas-token checks.
	// Key1 and Key2 are the accepted keys; an empty key never matches.
	SASKeysEnabled bool
	Key1, Key2     string

	// ClientCertEnabled turns on the TLS client certificate check: a
	// certificate chaining to Trust passes, and with AllowUnknownCA so does
	// one from an unknown CA or a self-signed one. A nil Trust means only
	// AllowUnknownCA certificates can pass.
	ClientCertEnabled bool
	AllowUnknownCA    bool
	Trust             *certs.TrustBundle

	// Now returns the current time; nil means time.Now. For tests.
	Now func() time.Time
}

// Authenticator checks inbound requests. Its configuration is fixed by New;
// it remembers client certificate chains it has verified (see
// verifiedCache). It is safe for concurrent use.
type Authenticator struct {
	sas            bool
	keyHashes      [][sha256.Size]byte // SHA-256 of each non-empty key, for aeg-sas-key
	signingKeys    [][]byte            // HMAC key of each non-empty key, for aeg-sas-token
	cert           bool
	allowUnknownCA bool
	trust          *certs.TrustBundle
	now            func() time.Time
	verified       verifiedCache
}

// New returns an Authenticator for o. It keeps no reference to o.
func New(o Options) *Authenticator {
	a := &Authenticator{
		sas:            o.SASKeysEnabled,
		cert:           o.ClientCertEnabled,
		allowUnknownCA: o.AllowUnknownCA,
		trust:          o.Trust,
		now:            o.Now,
	}
	if a.now == nil {
		a.now = time.Now
	}
	for _, k := range []string{o.Key1, o.Key2} {
		if k == "" {
			continue
		}
		a.keyHashes = append(a.keyHashes, sha256.Sum256([]byte(k)))
		a.signingKeys = append(a.signingKeys, signingKey(k))
	}
	return a
}

// Authenticate checks one request: first the SAS credentials (aeg-sas-key or
// "Authorization: SharedAccessKey <key>", then aeg-sas-token or
// "Authorization: SharedAccessSignature <token>") when
// SAS keys are enabled, then the TLS client
// certificate in r.TLS.PeerCertificates when client certificates are
// enabled. One passing check is enough; with both disabled every request
// passes. It returns nil or a *Failure, which is ErrUnauthorized under
// errors.Is and names the kind of failure. The reason says which check
// passed or why each failed ("sas key mismatch", "sas token expired",
// "client certificate not trusted", ...); it is for debug logging only, must
// not be sent to the client, and never contains a key, a token or a
// certificate. Authenticate does not read the body.
func (a *Authenticator) Authenticate(r *http.Request) (reason string, err error) {
	if !a.sas && !a.cert {
		return "authentication disabled", nil
	}
	var failed []string
	kind := ""
	if a.sas {
		reason, k, ok := a.checkSAS(r)
		if ok {
			return reason, nil
		}
		failed, kind = append(failed, reason), k
	}
	if a.cert {
		reason, k, ok := a.checkCert(r)
		if ok {
			return reason, nil
		}
		failed = append(failed, reason)
		if kind == "" {
			kind = k
		}
	}
	if kind == "" {
		kind = FailNoCredentials
	}
	return strings.Join(failed, "; "), &Failure{Kind: kind}
}

// authorizationScheme is the scheme of a SAS token in the Authorization
// header, the way cloud Event Grid also takes it.
const authorizationScheme = "SharedAccessSignature"

// sasToken returns the request's SAS token: aeg-sas-token, or else an
// Authorization header of the SharedAccessSignature scheme.
func sasToken(r *http.Request) string { return credential(r, HeaderSASToken, authorizationScheme) }

// keyScheme is the scheme of a key in the Authorization header, the way
// Event Grid namespaces take it.
const keyScheme = "SharedAccessKey"

// sasKey returns the request's key: aeg-sas-key, or else an Authorization
// header of the SharedAccessKey scheme.
func sasKey(r *http.Request) string { return credential(r, HeaderSASKey, keyScheme) }

// credential returns the value of header, or else the credentials of an
// Authorization header of scheme (compared ignoring case).
func credential(r *http.Request, header, scheme string) string {
	if v := r.Header.Get(header); v != "" {
		return v
	}
	got, cred, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(got, scheme) {
		return ""
	}
	return strings.TrimSpace(cred)
}

// checkSAS checks the SAS credentials. On failure, kind is the first
// credential refused, or "" when none was presented.
func (a *Authenticator) checkSAS(r *http.Request) (reason, kind string, ok bool) {
	key, token := sasKey(r), sasToken(r)
	if key == "" && token == "" {
		return "no sas key or token", "", false
	}
	var failed []string
	if key != "" {
		if a.matchKey(key) {
			return "sas key", "", true
		}
		failed, kind = append(failed, "sas key mismatch"), FailSASKey
	}
	if token != "" {
		reason := a.verifyToken(r, token)
		if reason == "" {
			return "sas token", "", true
		}
		failed = append(failed, reason)
		if kind == "" {
			kind = FailSASToken
		}
	}
	return strings.Join(failed, "; "), kind, false
}

// matchKey compares the presented key with every configured key in constant
// time. Hashing first makes the time independent of the keys' lengths too.
func (a *Authenticator) matchKey(presented string) bool {
	h := sha256.Sum256([]byte(presented))
	match := 0
	for i := range a.keyHashes {
		match |= subtle.ConstantTimeCompare(h[:], a.keyHashes[i][:])
	}
	return match == 1
}

// checkCert checks the TLS client certificate. On failure, kind is
// FailClientCertificate, or "" when none was presented.
func (a *Authenticator) checkCert(r *http.Request) (reason, kind string, ok bool) {
	reason, ok = a.verifyCert(r)
	if !ok && r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		kind = FailClientCertificate
	}
	return reason, kind, ok
}

func (a *Authenticator) verifyCert(r *http.Request) (string, bool) {
	if r.TLS == nil {
		return "no client certificate over plain http", false
	}
	peers := r.TLS.PeerCertificates
	if len(peers) == 0 {
		return "no client certificate", false
	}
	leaf, now := peers[0], a.now()
	if now.Before(leaf.NotBefore) {
		return "client certificate not yet valid", false
	}
	if now.After(leaf.NotAfter) {
		return "client certificate expired", false
	}
	if !certs.AllowsUsage(leaf, x509.ExtKeyUsageClientAuth) {
		return "client certificate not for client authentication", false
	}
	if pool := a.trust.Pool(); pool != nil {
		key := cacheKey(pool, peers)
		if a.verified.valid(key, now) {
			return "client certificate trusted", true
		}
		inter := x509.NewCertPool()
		for _, c := range peers[1:] {
			inter.AddCert(c)
		}
		chains, err := leaf.Verify(x509.VerifyOptions{
			Roots:         pool,
			Intermediates: inter,
			CurrentTime:   now,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		})
		if err == nil {
			a.verified.add(key, chains[0])
			return "client certificate trusted", true
		}
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) {
			return "client certificate chain invalid", false
		}
	}
	if a.allowUnknownCA {
		return "client certificate from an unknown CA allowed", true
	}
	return "client certificate not trusted", false
}
