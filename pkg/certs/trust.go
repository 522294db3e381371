package certs

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/workload"
)

// TrustBundle is a set of trusted CA certificates: the IoT Edge trust
// bundle, a CA file, or a fixed list. Bundles from NewIoTEdgeTrust and
// NewFileTrust refresh themselves while Run runs. Its methods are safe for
// concurrent use, and a nil *TrustBundle is an empty bundle.
type TrustBundle struct {
	snap atomic.Pointer[trustSnapshot]

	// refresh returns the bundle's current certificates; nil for a fixed
	// bundle. changed, when set, reports whether a refresh is needed.
	refresh  func(ctx context.Context) ([]*x509.Certificate, error)
	changed  func() bool
	interval time.Duration
	opts     options
	log      zerolog.Logger
	loop     *runner
}

// trustSnapshot is one immutable version of a bundle.
type trustSnapshot struct {
	certs []*x509.Certificate
	pool  *x509.CertPool

	sysOnce sync.Once
	sys     *x509.CertPool // system roots plus certs, built on first use
}

func newSnapshot(certs []*x509.Certificate) *trustSnapshot {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return &trustSnapshot{certs: certs, pool: pool}
}

// systemRoots loads the system's roots once; an empty pool when the system
// has none.
var systemRoots = sync.OnceValue(func() *x509.CertPool {
	p, err := x509.SystemCertPool()
	if err != nil || p == nil {
		return x509.NewCertPool()
	}
	return p
})

// NewTrustBundle returns a fixed bundle of certs.
func NewTrustBundle(certs ...*x509.Certificate) *TrustBundle {
	t := &TrustBundle{loop: newRunner()}
	t.snap.Store(newSnapshot(append([]*x509.Certificate(nil), certs...)))
	return t
}

// NewIoTEdgeTrust fetches the trust bundle from the workload API. It returns
// an error when that first fetch fails or the bundle is empty. Run fetches
// it again every WithRefreshInterval (default 1 h); a failed refresh is
// logged, keeps the old bundle and is retried with back-off.
func NewIoTEdgeTrust(ctx context.Context, c *workload.Client, log zerolog.Logger, opts ...Option) (*TrustBundle, error) {
	t := &TrustBundle{
		refresh: c.TrustBundle,
		opts:    newOptions(opts),
		log:     log.With().Str("component", "certs").Str("certificate", "trust bundle").Str("source", "IoTEdge").Logger(),
		loop:    newRunner(),
	}
	t.interval = t.opts.refresh
	fctx, cancel := context.WithTimeout(ctx, t.opts.fetchTimeout)
	defer cancel()
	certs, err := c.TrustBundle(fctx)
	if err != nil {
		return nil, err
	}
	t.snap.Store(newSnapshot(certs))
	t.log.Info().Int("certificates", len(certs)).Msg("trust bundle fetched from the workload API")
	return t, nil
}

// LoadCAFile returns a fixed bundle of the certificates in the PEM file at
// path. It returns an error when the file cannot be read, holds no
// certificate or a certificate fails to parse.
func LoadCAFile(path string) (*TrustBundle, error) {
	certs, err := readCAFile(path)
	if err != nil {
		return nil, err
	}
	return NewTrustBundle(certs...), nil
}

// NewFileTrust loads the PEM file at path like LoadCAFile. Run checks the
// file's modification time and size every interval (DefaultPollInterval when
// interval <= 0) and reloads it when it changes; a file that fails to load
// is logged and the old bundle kept.
func NewFileTrust(path string, interval time.Duration, log zerolog.Logger) (*TrustBundle, error) {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	stamp := stampOf(path)
	certs, err := readCAFile(path)
	if err != nil {
		return nil, err
	}
	t := &TrustBundle{
		opts:     newOptions(nil),
		interval: interval,
		log:      log.With().Str("component", "certs").Str("certificate", "trust bundle").Str("source", "File").Logger(),
		loop:     newRunner(),
	}
	// The stamps are used by the Run goroutine only, once construction is over.
	loaded, failed, pending := stamp, fileStamp{}, fileStamp{}
	t.changed = func() bool {
		pending = stampOf(path)
		return pending != loaded && pending != failed
	}
	t.refresh = func(context.Context) ([]*x509.Certificate, error) {
		certs, err := readCAFile(path)
		if err != nil {
			failed = pending // logged once per change
			return nil, err
		}
		loaded, failed = pending, fileStamp{}
		return certs, nil
	}
	t.snap.Store(newSnapshot(certs))
	return t, nil
}

// Pool returns the bundle's certificates as a pool. The pool is shared:
// callers must not modify it. It returns nil for a nil bundle.
func (t *TrustBundle) Pool() *x509.CertPool {
	if t == nil {
		return nil
	}
	return t.snap.Load().pool
}

// Certificates returns a copy of the bundle's certificate list.
func (t *TrustBundle) Certificates() []*x509.Certificate {
	if t == nil {
		return nil
	}
	return append([]*x509.Certificate(nil), t.snap.Load().certs...)
}

// withSystemRoots returns the system roots plus the bundle; the system roots
// alone for a nil bundle. The pool is shared and must not be modified.
func (t *TrustBundle) withSystemRoots() *x509.CertPool {
	if t == nil {
		return systemRoots()
	}
	s := t.snap.Load()
	s.sysOnce.Do(func() {
		p := systemRoots().Clone()
		for _, c := range s.certs {
			p.AddCert(c)
		}
		s.sys = p
	})
	return s.sys
}

// Run refreshes the bundle until ctx is done or Close is called. For a fixed
// bundle it returns at once. Call it once, in its own goroutine; further
// calls return at once.
func (t *TrustBundle) Run(ctx context.Context) {
	if t == nil || t.refresh == nil {
		return
	}
	t.loop.run(ctx, t.refreshLoop)
}

// Close stops Run and waits for it to return. It always returns nil.
func (t *TrustBundle) Close(context.Context) error {
	if t != nil {
		t.loop.close()
	}
	return nil
}

func (t *TrustBundle) refreshLoop(ctx context.Context) {
	retry := backoff{min: t.opts.retryMin, max: t.opts.retryMax}
	wait := t.interval
	for sleep(ctx, wait) {
		wait = t.interval
		if t.changed != nil && !t.changed() {
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, t.opts.fetchTimeout)
		certs, err := t.refresh(fctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if t.changed == nil { // workload API: retry sooner than the next refresh
				wait = min(retry.next(), t.interval)
			}
			t.log.Warn().Err(err).Float64("retryInSeconds", wait.Seconds()).Msg("trust bundle refresh failed; keeping the current bundle")
			continue
		}
		retry.reset()
		if old := t.snap.Load().certs; !sameCerts(old, certs) {
			t.snap.Store(newSnapshot(certs))
			t.log.Info().Int("certificates", len(certs)).Msg("trust bundle changed")
		}
	}
}

func sameCerts(a, b []*x509.Certificate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// readCAFile parses every CERTIFICATE block of a PEM file.
func readCAFile(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("certs: read CA file: %w", err)
	}
	certs, err := workload.ParseCertificates(data)
	if err != nil {
		return nil, fmt.Errorf("certs: CA file %s: %w", path, err)
	}
	return certs, nil
}
