package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// DefaultPollInterval is how often file sources check their files when the
// caller passes a non-positive interval.
const DefaultPollInterval = 5 * time.Second

// Reloading is a certificate read from PEM files and read again when the
// files change. It serves as both a ServerSource and a ClientSource. Its
// methods are safe for concurrent use.
type Reloading struct {
	certFile, keyFile, caFile string
	interval                  time.Duration
	log                       zerolog.Logger
	loop                      *runner

	cur atomic.Pointer[tls.Certificate]

	// Owned by the constructor, then by the Run goroutine.
	loaded     fileStamps // stamps of the files behind cur
	lastFailed fileStamps // stamps of the last files that failed to load
}

var (
	_ ServerSource = (*Reloading)(nil)
	_ ClientSource = (*Reloading)(nil)
)

// NewFileServer loads a server certificate from certFile (PEM, the
// certificate optionally followed by its chain), keyFile (PEM private key)
// and, when caFile is not empty, chain certificates from caFile that are
// served after the certificate. It returns an error when the files cannot be
// read or do not form a certificate and matching key. Run polls the files'
// modification time and size every interval (DefaultPollInterval when
// interval <= 0) and reloads them when they change; when the new files fail
// to load, it logs the error once and keeps the old certificate.
func NewFileServer(certFile, keyFile, caFile string, interval time.Duration, log zerolog.Logger) (*Reloading, error) {
	return newReloading("server", certFile, keyFile, caFile, interval, log)
}

// NewFileIdentity loads the outbound identity (client) certificate from
// certFile and keyFile and reloads it like NewFileServer does.
func NewFileIdentity(certFile, keyFile string, interval time.Duration, log zerolog.Logger) (*Reloading, error) {
	return newReloading("identity", certFile, keyFile, "", interval, log)
}

func newReloading(kind, certFile, keyFile, caFile string, interval time.Duration, log zerolog.Logger) (*Reloading, error) {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	r := &Reloading{
		certFile: certFile, keyFile: keyFile, caFile: caFile,
		interval: interval,
		log:      log.With().Str("component", "certs").Str("certificate", kind).Str("source", "File").Logger(),
		loop:     newRunner(),
	}
	stamps := r.stamps()
	cert, err := loadKeyPair(certFile, keyFile, caFile)
	if err != nil {
		return nil, err
	}
	r.cur.Store(cert)
	r.loaded = stamps
	r.log.Info().Str("file", certFile).Str("subject", cert.Leaf.Subject.CommonName).
		Time("notAfter", cert.Leaf.NotAfter).Msg("certificate loaded")
	return r, nil
}

// GetCertificate returns the current certificate. It never fails.
func (r *Reloading) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cur.Load(), nil
}

// GetClientCertificate returns the current certificate. It never fails.
func (r *Reloading) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return r.cur.Load(), nil
}

// Current returns the certificate being served; its Leaf is set.
func (r *Reloading) Current() *tls.Certificate { return r.cur.Load() }

// Run watches the files until ctx is done or Close is called. Call it once,
// in its own goroutine; further calls return at once.
func (r *Reloading) Run(ctx context.Context) {
	r.loop.run(ctx, func(ctx context.Context) {
		for sleep(ctx, r.interval) {
			r.check()
		}
	})
}

// Close stops Run and waits for it to return. It always returns nil.
func (r *Reloading) Close(context.Context) error {
	r.loop.close()
	return nil
}

// check reloads the files when their stamps differ from the loaded ones.
// While they fail to load it retries on every poll but logs once per change.
func (r *Reloading) check() {
	stamps := r.stamps()
	if stamps == r.loaded {
		return
	}
	cert, err := loadKeyPair(r.certFile, r.keyFile, r.caFile)
	if err != nil {
		if stamps != r.lastFailed {
			r.log.Error().Err(err).Str("file", r.certFile).Msg("changed certificate files failed to load; keeping the current certificate")
			r.lastFailed = stamps
		}
		return
	}
	r.cur.Store(cert)
	r.loaded = stamps
	r.lastFailed = fileStamps{}
	ev := r.log.Info()
	if time.Now().After(cert.Leaf.NotAfter) {
		ev = r.log.Warn()
	}
	ev.Str("file", r.certFile).Str("subject", cert.Leaf.Subject.CommonName).
		Time("notAfter", cert.Leaf.NotAfter).Msg("certificate reloaded")
}

func (r *Reloading) stamps() fileStamps {
	return fileStamps{stampOf(r.certFile), stampOf(r.keyFile), stampOf(r.caFile)}
}

// fileStamp identifies a version of a file by modification time, size and,
// where the platform has them, inode number.
type fileStamp struct {
	modNano int64
	size    int64
	inode   uint64
	ok      bool
}

type fileStamps [3]fileStamp

func stampOf(path string) fileStamp {
	if path == "" {
		return fileStamp{}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{modNano: fi.ModTime().UnixNano(), size: fi.Size(), inode: inodeOf(fi), ok: true}
}

// loadKeyPair reads a PEM certificate (plus an optional chain file) and its
// key. Errors name the files, never their content.
func loadKeyPair(certFile, keyFile, caFile string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("certs: read certificate: %w", err)
	}
	if caFile != "" {
		chain, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("certs: read chain: %w", err)
		}
		certPEM = append(append(certPEM, '\n'), chain...)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("certs: read key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certs: load %s and %s: %w", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		leaf, err := x509.ParseCertificate(cert.Certificate[0])
		if err != nil {
			return nil, fmt.Errorf("certs: parse %s: %w", certFile, err)
		}
		cert.Leaf = leaf
	}
	return &cert, nil
}
