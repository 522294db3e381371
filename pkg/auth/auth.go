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

// Kinds of refusal: which credential was refused, or that none was
// presented, or that the credential does not hold the permission. They are
// few and fixed, so they can label a metric.
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
	// FailPermission: a valid SAS token on a route that needs a permission
	// a token never holds (403).
	FailPermission = "permission"
)

// FailureKinds lists every kind of refusal.
var FailureKinds = []string{FailNoCredentials, FailSASKey, FailSASToken, FailClientCertificate, FailPermission}

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

// Check checks one request's credentials and returns what they hold:
// the aeg-sas-key (or "Authorization: SharedAccessKey <key>") when SAS keys
// are enabled, then the TLS client certificate in r.TLS.PeerCertificates
// when client certificates are enabled, then the SAS token (aeg-sas-token
// or "Authorization: SharedAccessSignature <token>"). A key or a trusted
// certificate holds everything, so they are looked at first; a token holds
// what Grant.Permit says, on the resource it was signed for, whose scheme
// and host must be this request's. With both checks disabled every request
// holds everything. On failure it returns a *Failure, which is
// ErrUnauthorized under errors.Is, names the kind of failure and says
// what the client should know. The reason says which check passed or why
// each failed ("sas key mismatch", "sas token expired", "client
// certificate not trusted", ...); it is for logging only, must not be sent
// to the client, and never contains a key, a token or a certificate.
// Check does not read the body.
func (a *Authenticator) Check(r *http.Request) (g Grant, reason string, err error) {
	if !a.sas && !a.cert {
		return Grant{credential: CredentialNone, all: true}, "authentication disabled", nil
	}
	var key, token string
	if a.sas {
		key = sasKey(r)
		if key != "" && a.matchKey(key) {
			return Grant{credential: CredentialSASKey, all: true}, "sas key", nil
		}
		token = sasToken(r)
	}
	var certReason string
	if a.cert {
		var ok bool
		if certReason, ok = a.verifyCert(r); ok {
			return Grant{credential: CredentialClientCertificate, all: true}, certReason, nil
		}
	}
	var tokenReason string
	if token != "" {
		var resource string
		if resource, tokenReason = a.verifyToken(r, token); tokenReason == "" {
			return Grant{credential: CredentialSASToken, resource: resource, accepts: a.accepts()}, "sas token", nil
		}
	}
	reason, f := a.refusal(r, key, token, tokenReason, certReason)
	return Grant{}, reason, f
}

// refusal is Check's answer when nothing passed: the reason for the log
// (the SAS checks' failures, then the certificate's), and the Failure,
// whose kind is the first credential refused in the order key, token,
// certificate, and which tells the client, certificate first, what was
// missing or refused.
func (a *Authenticator) refusal(r *http.Request, key, token, tokenReason, certReason string) (string, *Failure) {
	f := &Failure{accepts: a.accepts()}
	var failed []string
	switch {
	case !a.sas:
	case key == "" && token == "":
		failed = append(failed, "no sas key or token")
	default:
		if key != "" {
			failed, f.Kind = append(failed, "sas key mismatch"), FailSASKey
		}
		if token != "" {
			failed = append(failed, tokenReason)
			if f.Kind == "" {
				f.Kind = FailSASToken
			}
		}
	}
	if a.cert {
		failed = append(failed, certReason)
		st := missing
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			st = refused
			if f.Kind == "" {
				f.Kind = FailClientCertificate
			}
		}
		f.note(certKind, st, refusalFindings[certReason])
	}
	switch {
	case !a.sas:
		if sasKey(r) != "" || sasToken(r) != "" {
			f.note(0, untold, refusalFindings["sas credentials presented, but sas keys are off"])
		}
	case key == "" && token == "":
		f.note(keyKind, missing, refusalFindings["no sas key or token"])
		f.note(tokenKind, missing, "")
	default:
		if key != "" {
			f.note(keyKind, refused, refusalFindings["sas key mismatch"])
		} else {
			f.note(keyKind, missing, "")
		}
		if token != "" {
			f.note(tokenKind, refused, refusalFindings[tokenReason])
		} else {
			f.note(tokenKind, missing, "")
		}
	}
	if f.Kind == "" {
		f.Kind = FailNoCredentials
	}
	return strings.Join(failed, "; "), f
}

// Authenticate is Check of a request that publishes to its own URL: a key
// or a trusted certificate passes, and a token passes when its resource
// lies above r.URL.Path. It is how a lone publish endpoint is checked; the
// API checks each route's permission with Check and Grant.Permit. It
// returns nil or a *Failure, and a reason for the log as Check does.
func (a *Authenticator) Authenticate(r *http.Request) (reason string, err error) {
	g, reason, err := a.Check(r)
	if err != nil || g.HoldsAll() {
		return reason, err
	}
	if why, err := g.Permit(Publish, r.URL.Path); err != nil {
		return why, err
	}
	return reason, nil
}

// accepts is the set of the kinds of credential a takes.
func (a *Authenticator) accepts() kinds {
	var k kinds
	if a.cert {
		k |= certKind
	}
	if a.sas {
		k |= keyKind | tokenKind
	}
	return k
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

// verifyCert checks the TLS client certificate and returns why it fails,
// or why it passes.
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
