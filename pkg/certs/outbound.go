package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"
)

// OutboundOptions selects how the broker's outbound TLS connections (WebHook
// and EventGrid destinations) check servers and identify themselves
// (docs/security.md#outbound).
type OutboundOptions struct {
	// SkipServerCertValidation turns off every server certificate check.
	SkipServerCertValidation bool
	// AllowUnknownCA accepts a chain that ends at an unknown or self-signed
	// root; the host name, validity period and key usage of the server's
	// certificate are still checked.
	AllowUnknownCA bool
	// Trust adds CA certificates (the IoT Edge trust bundle) to the system
	// roots; nil means the system roots alone. A refreshing bundle is read
	// at each handshake.
	Trust *TrustBundle
	// Identity, when not nil, provides the client certificate presented to
	// servers that ask for one.
	Identity ClientSource
}

// ErrNoServerName is returned from a handshake made with OutboundConfig when
// the connection has no server name to check the certificate against: the
// endpoint is an IP address, which Go's TLS client does not report to
// verification callbacks. DialTLS knows the address and checks it.
var ErrNoServerName = errors.New("certs: no server name to verify the certificate against (IP-address endpoints need DialTLS)")

// OutboundConfig returns the TLS config for the webhook and EventGrid
// clients: TLS 1.2 minimum, the identity certificate when o.Identity is set,
// and server verification per o:
//
//   - SkipServerCertValidation: no verification at all;
//   - otherwise the chain is verified against the system roots plus o.Trust,
//     for the server name and for server authentication;
//   - with AllowUnknownCA, a chain that fails only because its root is
//     unknown or self-signed is accepted, but the host name, the validity
//     period and the key usage of the server certificate are still checked;
//     without it, an unknown CA fails the handshake.
//
// The name checked is the one the connection sent as SNI, which Go derives
// from the URL's host; for an IP-address host there is none and the
// handshake fails with ErrNoServerName unless verification is skipped. Use
// DialTLS as http.Transport.DialTLSContext to verify IP-address endpoints too
// (proxied requests still use this config).
func OutboundConfig(o OutboundOptions) *tls.Config {
	return outboundConfig(o, "")
}

// DialTLS returns a function for http.Transport.DialTLSContext that dials
// addr with d (a zero net.Dialer when d is nil) and completes a TLS
// handshake configured like OutboundConfig, checking the server certificate
// against the dialled host, whether a name or an IP address. A failed
// handshake closes the connection.
func DialTLS(o OutboundOptions, d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if d == nil {
		d = &net.Dialer{}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("certs: dial %s: %w", addr, err)
		}
		cfg := outboundConfig(o, host)
		cfg.ServerName = host
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, err
		}
		return conn, nil
	}
}

// outboundConfig builds the config; host, when not empty, is the name or
// address the certificate must match, else the connection's SNI is used.
func outboundConfig(o OutboundOptions, host string) *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.Identity != nil {
		cfg.GetClientCertificate = o.Identity.GetClientCertificate
	}
	if o.SkipServerCertValidation {
		cfg.InsecureSkipVerify = true
		return cfg
	}
	// Go's built-in verification takes a fixed root pool and cannot accept an
	// unknown CA, so it is replaced by VerifyConnection, which reads the
	// current trust bundle and applies AllowUnknownCA.
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		name := host
		if name == "" {
			name = cs.ServerName
		}
		return verifyServer(cs.PeerCertificates, name, o.Trust, o.AllowUnknownCA, time.Now())
	}
	return cfg
}

func verifyServer(peer []*x509.Certificate, name string, trust *TrustBundle, allowUnknownCA bool, now time.Time) error {
	if len(peer) == 0 {
		return errors.New("certs: server sent no certificate")
	}
	if name == "" {
		return ErrNoServerName
	}
	leaf := peer[0]
	inter := x509.NewCertPool()
	for _, c := range peer[1:] {
		inter.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{
		DNSName:       name,
		Roots:         trust.withSystemRoots(),
		Intermediates: inter,
		CurrentTime:   now,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err == nil {
		return nil
	}
	var unknown x509.UnknownAuthorityError
	if !allowUnknownCA || !errors.As(err, &unknown) {
		return err
	}
	// Unknown or self-signed root, which is allowed: check what still can be.
	if err := leaf.VerifyHostname(name); err != nil {
		return err
	}
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired,
			Detail: fmt.Sprintf("current time %s is outside %s to %s", now.UTC().Format(time.RFC3339),
				leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))}
	}
	if !AllowsUsage(leaf, x509.ExtKeyUsageServerAuth) {
		return x509.CertificateInvalidError{Cert: leaf, Reason: x509.IncompatibleUsage}
	}
	return nil
}

// AllowsUsage reports whether cert's extended key usage permits want: no
// extended key usage at all means any usage (RFC 5280 §4.2.1.12).
func AllowsUsage(cert *x509.Certificate, want x509.ExtKeyUsage) bool {
	if len(cert.ExtKeyUsage) == 0 && len(cert.UnknownExtKeyUsage) == 0 {
		return true
	}
	for _, u := range cert.ExtKeyUsage {
		if u == want || u == x509.ExtKeyUsageAny {
			return true
		}
	}
	return false
}
