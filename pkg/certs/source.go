package certs

import (
	"crypto/tls"
	"time"
)

// ServerSource provides the HTTPS listener's certificate and keeps it
// current. GetCertificate has the signature of tls.Config.GetCertificate.
type ServerSource interface {
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

// ClientSource provides the certificate presented on outbound TLS
// connections. GetClientCertificate has the signature of
// tls.Config.GetClientCertificate.
type ClientSource interface {
	GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error)
}

// ServerConfig returns the listener config: TLS 1.2 minimum, GetCertificate
// from src, and, when clientCerts is true, ClientAuth = tls.RequestClientCert.
// Client certificates are requested but not verified in the handshake:
// package auth verifies them per request, so that a SAS key alone can also
// pass (docs/design.md#authentication).
func ServerConfig(src ServerSource, clientCerts bool) *tls.Config {
	cfg := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: src.GetCertificate,
	}
	if clientCerts {
		cfg.ClientAuth = tls.RequestClientCert
	}
	return cfg
}

// Option tunes the background loops of the renewing, reloading and trust
// sources. Options that do not apply to a constructor are ignored.
type Option func(*options)

type options struct {
	renewFraction float64
	retryMin      time.Duration
	retryMax      time.Duration
	refresh       time.Duration
	fetchTimeout  time.Duration
}

func newOptions(opts []Option) options {
	o := options{
		renewFraction: 0.8,
		retryMin:      time.Second,
		retryMax:      time.Minute,
		refresh:       time.Hour,
		fetchTimeout:  30 * time.Second,
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithRenewFraction sets when an IoT Edge certificate is renewed, as a
// fraction of its validity period (default 0.8). Values outside (0, 1] are
// ignored.
func WithRenewFraction(f float64) Option {
	return func(o *options) {
		if f > 0 && f <= 1 {
			o.renewFraction = f
		}
	}
}

// WithRetryBackoff sets the delays between failed fetches: the first retry
// waits min, each further one twice as long, at most max (defaults 1 s and
// 1 min). Non-positive values are ignored.
func WithRetryBackoff(min, max time.Duration) Option {
	return func(o *options) {
		if min > 0 {
			o.retryMin = min
		}
		if max > 0 {
			o.retryMax = max
		}
		if o.retryMax < o.retryMin {
			o.retryMax = o.retryMin
		}
	}
}

// WithRefreshInterval sets how often a trust bundle is fetched or re-read
// (default 1 h). Non-positive values are ignored.
func WithRefreshInterval(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.refresh = d
		}
	}
}

// WithFetchTimeout bounds each call to the workload API (default 30 s).
// Non-positive values are ignored.
func WithFetchTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.fetchTimeout = d
		}
	}
}
