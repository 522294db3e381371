package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"time"
)

// SelfSignedValidity is how long a certificate from NewSelfSigned is valid.
// It stays within the 825 days some TLS clients accept for server
// certificates; the broker makes a new one at every start.
const SelfSignedValidity = 730 * 24 * time.Hour

// Static is a certificate that never changes. It serves as both a
// ServerSource and a ClientSource. Its methods are safe for concurrent use.
type Static struct {
	cert *tls.Certificate
}

var (
	_ ServerSource = (*Static)(nil)
	_ ClientSource = (*Static)(nil)
)

// NewStatic returns a source serving cert. It parses the leaf when cert.Leaf
// is nil and returns an error when cert has no certificate or the leaf does
// not parse.
func NewStatic(cert tls.Certificate) (*Static, error) {
	if len(cert.Certificate) == 0 {
		return nil, fmt.Errorf("certs: static certificate is empty")
	}
	if cert.Leaf == nil {
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			return nil, fmt.Errorf("certs: parse static certificate: %w", err)
		}
		cert.Leaf = leaf
	}
	return &Static{cert: &cert}, nil
}

// NewSelfSigned makes a self-signed server certificate with a new ECDSA
// P-256 key (docs/design.md#outside-iot-edge: the broker runs outside IoT Edge with
// server certificate source IoTEdge). Its common name is the host name (or
// "localhost" when that is unknown); its subject alternative names are the
// host name, "localhost", 127.0.0.1, ::1 and extraNames, each added as an IP
// address when it parses as one. It is valid from an hour ago for
// SelfSignedValidity. The key exists only in memory.
func NewSelfSigned(extraNames ...string) (*Static, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: host},
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	seen := make(map[string]bool)
	for _, name := range append([]string{host, "localhost", "127.0.0.1", "::1"}, extraNames...) {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if ip := net.ParseIP(name); ip != nil {
			if !seen[ip.String()] {
				seen[ip.String()] = true
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
			continue
		}
		if key := strings.ToLower(name); !seen[key] {
			seen[key] = true
			tmpl.DNSNames = append(tmpl.DNSNames, name)
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certs: self-signed key: %w", err)
	}
	tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certs: self-signed serial: %w", err)
	}
	now := time.Now()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(SelfSignedValidity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("certs: self-signed certificate: %w", err)
	}
	return NewStatic(tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key})
}

// GetCertificate returns the certificate. It never fails.
func (s *Static) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.cert, nil }

// GetClientCertificate returns the certificate. It never fails.
func (s *Static) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return s.cert, nil
}

// Current returns the certificate; its Leaf is set.
func (s *Static) Current() *tls.Certificate { return s.cert }
