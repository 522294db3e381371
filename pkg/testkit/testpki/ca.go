package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority with an ECDSA P-256 key. A CA made by
// NewCA is a root; one made by NewIntermediate is signed by its parent, and
// the certificates it issues carry it as their chain. A CA is safe for
// concurrent use.
type CA struct {
	// Cert is this CA's certificate.
	Cert *x509.Certificate
	// Key is this CA's private key.
	Key *ecdsa.PrivateKey

	root  *x509.Certificate // the trust anchor of the hierarchy
	chain [][]byte          // DER of the intermediates from this CA up to, excluding, the root
}

// NewCA returns a new root CA whose subject common name is name, valid from
// an hour ago for ten years. It fails tb on error.
func NewCA(tb testing.TB, name string) *CA {
	tb.Helper()
	ca := newCA(tb, name, 10*365*24*time.Hour, nil)
	ca.root = ca.Cert
	return ca
}

// NewIntermediate returns a CA named name signed by ca. Certificates it
// issues carry the intermediate (and ca's own chain) after the leaf; its
// PEM and Pool still describe the root. It fails tb on error.
func (ca *CA) NewIntermediate(tb testing.TB, name string) *CA {
	tb.Helper()
	in := newCA(tb, name, 5*365*24*time.Hour, ca)
	in.root = ca.root
	in.chain = append([][]byte{in.Cert.Raw}, ca.chain...)
	return in
}

// newCA makes a CA certificate valid from an hour ago for validity, signed
// by parent, or self-signed when parent is nil.
func newCA(tb testing.TB, name string, validity time.Duration, parent *CA) *CA {
	tb.Helper()
	key := mustKey(tb)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          mustSerial(tb),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"edgegrid test"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	issuer, signer := tmpl, any(key)
	if parent != nil {
		issuer, signer = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, &key.PublicKey, signer)
	if err != nil {
		tb.Fatalf("testpki: create CA %q: %v", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("testpki: parse CA %q: %v", name, err)
	}
	return &CA{Cert: cert, Key: key}
}

// Issue returns a certificate for cn signed by ca, with the given DNS and IP
// subject alternative names (cn is not added to them), valid from a minute
// ago (or an hour before notAfter, when notAfter is in the past) until
// notAfter. usage lists the extended key usages; none means both server and
// client authentication. The result has Leaf set and carries ca's
// intermediates after the leaf. It fails tb on error.
func (ca *CA) Issue(tb testing.TB, cn string, dnsNames []string, ips []net.IP, notAfter time.Time, usage ...x509.ExtKeyUsage) tls.Certificate {
	tb.Helper()
	if len(usage) == 0 {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	notBefore := time.Now().Add(-time.Minute)
	if !notBefore.Before(notAfter) {
		notBefore = notAfter.Add(-time.Hour)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    dnsNames,
		IPAddresses: ips,
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		ExtKeyUsage: usage,
	}
	cert, _, err := ca.sign(tmpl)
	if err != nil {
		tb.Fatalf("testpki: issue %q: %v", cn, err)
	}
	return cert
}

// sign issues a leaf from tmpl with a fresh ECDSA P-256 key. It fills in the
// serial number, key usage and basic constraints. It returns the certificate
// and the PKCS#8 PEM of its key. It does not touch a testing.TB, so it can
// run in server goroutines.
func (ca *CA) sign(tmpl *x509.Certificate) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	chain := append([][]byte{der}, ca.chain...)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, keyPEM, nil
}

// PEM returns the root certificate of ca's hierarchy (the trust anchor) as
// PEM.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.root.Raw})
}

// Pool returns a new pool holding the root certificate of ca's hierarchy.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.root)
	return p
}

// WriteFiles issues a certificate for cn (subject alternative names cn,
// dnsNames and 127.0.0.1, server and client usage, valid for a day) and
// writes it with its chain to dir/<cn>.crt and its PKCS#8 key to
// dir/<cn>.key, replacing existing files atomically (write and rename). It
// returns the two paths and fails tb on error.
func (ca *CA) WriteFiles(tb testing.TB, dir, cn string, dnsNames ...string) (certFile, keyFile string) {
	tb.Helper()
	names := append([]string{cn}, dnsNames...)
	cert := ca.Issue(tb, cn, names, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(24*time.Hour))
	certFile = filepath.Join(dir, cn+".crt")
	keyFile = filepath.Join(dir, cn+".key")
	MustWriteFile(tb, certFile, CertPEM(cert))
	MustWriteFile(tb, keyFile, KeyPEM(tb, cert))
	return certFile, keyFile
}

// CertPEM returns the certificate chain of cert as PEM.
func CertPEM(cert tls.Certificate) []byte {
	var out []byte
	for _, der := range cert.Certificate {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	return out
}

// KeyPEM returns the private key of cert as PKCS#8 PEM. It fails tb on
// error.
func KeyPEM(tb testing.TB, cert tls.Certificate) []byte {
	tb.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		tb.Fatalf("testpki: marshal key: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// MustWriteFile writes data to path through a temporary file and a rename,
// so a concurrent reader sees the old or the new content, never a mix. It
// fails tb on error.
func MustWriteFile(tb testing.TB, path string, data []byte) {
	tb.Helper()
	tmp := fmt.Sprintf("%s.tmp%d", path, time.Now().UnixNano())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		tb.Fatalf("testpki: write %s: %v", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatalf("testpki: rename %s: %v", tmp, err)
	}
}

// SelfSigned returns a self-signed certificate for cn (its only subject
// alternative name, as an IP address when cn parses as one), valid from a
// minute ago for a day, for server and client authentication. The result
// has Leaf set. It fails tb on error.
func SelfSigned(tb testing.TB, cn string) tls.Certificate {
	tb.Helper()
	key := mustKey(tb)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          mustSerial(tb),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	if ip := net.ParseIP(cn); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{cn}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatalf("testpki: self-signed %q: %v", cn, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("testpki: parse self-signed: %v", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

func mustKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("testpki: generate key: %v", err)
	}
	return key
}

func mustSerial(tb testing.TB) *big.Int {
	tb.Helper()
	s, err := randomSerial()
	if err != nil {
		tb.Fatalf("testpki: serial: %v", err)
	}
	return s
}

func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}
