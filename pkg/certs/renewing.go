package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/workload"
)

// Default validity requested from the workload API when the caller passes a
// non-positive lifetime: what the reference sample module requested.
const (
	DefaultServerLifetime   = 90 * 24 * time.Hour
	DefaultIdentityLifetime = 7 * 24 * time.Hour
)

// Renewing is a certificate from the IoT Edge workload API that renews
// itself in the background before it expires. It serves as both a
// ServerSource and a ClientSource. Its methods are safe for concurrent use.
type Renewing struct {
	kind     string // "server" or "identity", for logs and errors
	fetch    func(ctx context.Context, expiry time.Time) (*tls.Certificate, error)
	lifetime time.Duration
	opts     options
	log      zerolog.Logger
	loop     *runner

	cur       atomic.Pointer[tls.Certificate]
	fetchedAt time.Time // set by the constructor, then only by the Run goroutine
}

var (
	_ ServerSource = (*Renewing)(nil)
	_ ClientSource = (*Renewing)(nil)
)

// NewIoTEdgeServer fetches a server certificate for commonName
// (IOTEDGE_GATEWAYHOSTNAME, or the module id) from the workload API, asking
// for lifetime of validity (DefaultServerLifetime when lifetime <= 0). It
// returns an error when that first fetch fails. Run renews the certificate
// at WithRenewFraction of its validity, retrying failures with back-off
// while the old certificate keeps being served.
func NewIoTEdgeServer(ctx context.Context, c *workload.Client, commonName string, lifetime time.Duration, log zerolog.Logger, opts ...Option) (*Renewing, error) {
	if lifetime <= 0 {
		lifetime = DefaultServerLifetime
	}
	fetch := func(ctx context.Context, expiry time.Time) (*tls.Certificate, error) {
		return c.ServerCert(ctx, commonName, expiry)
	}
	return newRenewing(ctx, "server", fetch, lifetime, log, opts)
}

// NewIoTEdgeIdentity fetches the module's identity (client) certificate from
// the workload API, asking for lifetime of validity
// (DefaultIdentityLifetime when lifetime <= 0). It returns an error when
// that first fetch fails. Run renews it like NewIoTEdgeServer does.
func NewIoTEdgeIdentity(ctx context.Context, c *workload.Client, lifetime time.Duration, log zerolog.Logger, opts ...Option) (*Renewing, error) {
	if lifetime <= 0 {
		lifetime = DefaultIdentityLifetime
	}
	return newRenewing(ctx, "identity", c.IdentityCert, lifetime, log, opts)
}

func newRenewing(ctx context.Context, kind string, fetch func(context.Context, time.Time) (*tls.Certificate, error),
	lifetime time.Duration, log zerolog.Logger, opts []Option) (*Renewing, error) {
	r := &Renewing{
		kind:     kind,
		fetch:    fetch,
		lifetime: lifetime,
		opts:     newOptions(opts),
		log:      log.With().Str("component", "certs").Str("certificate", kind).Str("source", "IoTEdge").Logger(),
		loop:     newRunner(),
	}
	cert, err := r.fetchOnce(ctx)
	if err != nil {
		return nil, err
	}
	r.cur.Store(cert)
	r.fetchedAt = time.Now()
	r.log.Info().Str("subject", cert.Leaf.Subject.CommonName).Time("notAfter", cert.Leaf.NotAfter).
		Time("renewAt", r.renewAt(cert, r.fetchedAt)).Msg("certificate fetched from the workload API")
	return r, nil
}

// GetCertificate returns the current certificate. It never fails.
func (r *Renewing) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cur.Load(), nil
}

// GetClientCertificate returns the current certificate. It never fails.
func (r *Renewing) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return r.cur.Load(), nil
}

// Current returns the certificate being served; its Leaf is set.
func (r *Renewing) Current() *tls.Certificate { return r.cur.Load() }

// Run renews the certificate until ctx is done or Close is called. Call it
// once, in its own goroutine; further calls return at once.
func (r *Renewing) Run(ctx context.Context) { r.loop.run(ctx, r.renewLoop) }

// Close stops Run and waits for it to return. It always returns nil.
func (r *Renewing) Close(context.Context) error {
	r.loop.close()
	return nil
}

func (r *Renewing) renewLoop(ctx context.Context) {
	retry := backoff{min: r.opts.retryMin, max: r.opts.retryMax}
	next := r.renewAt(r.cur.Load(), r.fetchedAt)
	for {
		if !sleep(ctx, time.Until(next)) {
			return
		}
		cert, err := r.fetchOnce(ctx)
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			d := retry.next()
			old := r.cur.Load()
			ev := r.log.Warn()
			if now.After(old.Leaf.NotAfter) {
				ev = r.log.Error()
			}
			ev.Err(err).Time("notAfter", old.Leaf.NotAfter).Float64("retryInSeconds", d.Seconds()).
				Msg("certificate renewal failed; still serving the current certificate")
			next = now.Add(d)
			continue
		}
		retry.reset()
		r.cur.Store(cert)
		r.fetchedAt = now
		next = r.renewAt(cert, now)
		if earliest := now.Add(r.opts.retryMin); next.Before(earliest) {
			next = earliest // a certificate that is due at once must not cause a busy loop
		}
		r.log.Info().Time("notAfter", cert.Leaf.NotAfter).Time("renewAt", next).Msg("certificate renewed")
	}
}

// renewAt is when cert is due for renewal: renewFraction of its validity,
// counted from when it was fetched if its NotBefore is earlier (backdated).
func (r *Renewing) renewAt(cert *tls.Certificate, fetchedAt time.Time) time.Time {
	start := cert.Leaf.NotBefore
	if fetchedAt.After(start) {
		start = fetchedAt
	}
	life := cert.Leaf.NotAfter.Sub(start)
	if life < 0 {
		life = 0
	}
	return start.Add(time.Duration(float64(life) * r.opts.renewFraction))
}

func (r *Renewing) fetchOnce(ctx context.Context) (*tls.Certificate, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.fetchTimeout)
	defer cancel()
	cert, err := r.fetch(ctx, time.Now().Add(r.lifetime))
	if err != nil {
		return nil, err
	}
	if cert.Leaf == nil {
		return nil, errors.New("certs: " + r.kind + " certificate without a parsed leaf")
	}
	return cert, nil
}
