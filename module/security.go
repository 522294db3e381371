package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/workload"
)

// defaultWorkloadAPIVersion is used when IoT Edge does not say which
// workload API version it speaks.
const defaultWorkloadAPIVersion = "2019-01-30"

// security holds the broker's certificates, trust bundles and
// authenticator. Sources that refresh themselves run until close.
type security struct {
	serverTLS *tls.Config // nil when no HTTPS listener is configured
	auth      *auth.Authenticator
	outbound  certs.OutboundOptions

	runners []runner
}

// runner is a certificate source that refreshes itself until it is closed.
type runner interface {
	Run(context.Context)
	Close(context.Context) error
}

// setupSecurity builds the certificate sources and the authenticator from
// cfg: from the IoT Edge workload API when the broker runs under IoT Edge,
// from files when configured so, and otherwise a self-signed server
// certificate with a warning.
func setupSecurity(ctx context.Context, cfg config.Config, log zerolog.Logger) (*security, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.StartTimeoutSeconds)*time.Second)
	defer cancel()
	wl, err := workloadClient(cfg)
	if err != nil {
		return nil, err
	}
	b := &securityBuilder{
		cfg:     cfg,
		wl:      wl,
		log:     log.With().Str("component", "security").Logger(),
		certLog: log, // package certs names its own component
		s:       &security{},
	}
	if err := b.serverTLS(ctx); err != nil {
		return nil, err
	}
	inbound, err := b.inboundTrust(ctx)
	if err != nil {
		return nil, err
	}
	b.s.auth = auth.New(auth.Options{
		SASKeysEnabled:    cfg.SASKeysEnabled,
		Key1:              cfg.SASKey1,
		Key2:              cfg.SASKey2,
		ClientCertEnabled: cfg.ClientCertEnabled,
		AllowUnknownCA:    cfg.ClientCertAllowUnknownCA,
		Trust:             inbound,
	})
	if err := b.outbound(ctx); err != nil {
		return nil, err
	}
	return b.s, nil
}

// workloadClient returns the IoT Edge workload API client, or nil outside
// IoT Edge.
func workloadClient(cfg config.Config) (*workload.Client, error) {
	if cfg.IoTEdgeWorkloadURI == "" {
		return nil, nil
	}
	wl, err := workload.New(cfg.IoTEdgeWorkloadURI, or(cfg.IoTEdgeAPIVersion, defaultWorkloadAPIVersion), cfg.IoTEdgeModuleID, cfg.IoTEdgeGenerationID)
	if err != nil {
		return nil, fmt.Errorf("IOTEDGE_WORKLOADURI: %w", err)
	}
	return wl, nil
}

// securityBuilder holds what the steps of setupSecurity share.
type securityBuilder struct {
	cfg config.Config
	wl  *workload.Client // nil outside IoT Edge
	// log is for this file's lines; certLog is handed to package certs,
	// whose lines carry their own component.
	log, certLog zerolog.Logger
	s            *security
	edgeTrust    *certs.TrustBundle // fetched on first use
}

// iotEdgeTrust returns the IoT Edge trust bundle, fetched once: it serves
// both inbound client certificates and outbound server verification. It is
// nil outside IoT Edge.
func (b *securityBuilder) iotEdgeTrust(ctx context.Context) (*certs.TrustBundle, error) {
	if b.edgeTrust == nil && b.wl != nil {
		t, err := certs.NewIoTEdgeTrust(ctx, b.wl, b.certLog)
		if err != nil {
			return nil, fmt.Errorf("fetching the IoT Edge trust bundle: %w", err)
		}
		b.edgeTrust = t
		b.s.runners = append(b.s.runners, t)
	}
	return b.edgeTrust, nil
}

// serverTLS sets up the HTTPS listener's certificate unless
// inbound__serverAuth__tlsPolicy is disabled.
func (b *securityBuilder) serverTLS(ctx context.Context) error {
	if b.cfg.TLSPolicy == config.TLSDisabled {
		return nil
	}
	src, err := serverSource(ctx, b.cfg, b.wl, b.certLog, b.log)
	if err != nil {
		return err
	}
	b.s.serverTLS = certs.ServerConfig(src, b.cfg.ClientCertEnabled)
	if r, ok := src.(runner); ok {
		b.s.runners = append(b.s.runners, r)
	}
	return nil
}

// inboundTrust returns the bundle client certificates are checked against:
// nil when client certificates are off or no bundle exists.
func (b *securityBuilder) inboundTrust(ctx context.Context) (*certs.TrustBundle, error) {
	cfg := b.cfg
	if !cfg.ClientCertEnabled {
		return nil, nil
	}
	if cfg.TLSPolicy == config.TLSDisabled && !cfg.SASKeysEnabled {
		b.log.Warn().Msg("client certificates are required but only plain HTTP is served and SAS keys are off: every request except /healthz will get 401")
	}
	switch {
	case cfg.ClientCertSource == config.CertSourceFile:
		t, err := certs.NewFileTrust(cfg.ClientCertCAFile, certs.DefaultPollInterval, b.certLog)
		if err != nil {
			return nil, fmt.Errorf("inbound__clientAuth__clientCert__caFile: %w", err)
		}
		b.s.runners = append(b.s.runners, t)
		return t, nil
	case b.wl != nil:
		return b.iotEdgeTrust(ctx)
	case !cfg.ClientCertAllowUnknownCA:
		b.log.Warn().Msg("no IoT Edge trust bundle outside IoT Edge and inbound__clientAuth__clientCert__allowUnknownCA is false: every client certificate will be refused; set inbound__clientAuth__clientCert__source=File with a caFile")
	}
	return nil, nil
}

// outbound sets up how deliveries verify servers and which client
// certificate they present.
func (b *securityBuilder) outbound(ctx context.Context) error {
	cfg := b.cfg
	b.s.outbound = certs.OutboundOptions{
		SkipServerCertValidation: cfg.WebhookSkipServerCertValidation,
		AllowUnknownCA:           cfg.WebhookAllowUnknownCA,
	}
	if b.wl != nil {
		t, err := b.iotEdgeTrust(ctx)
		if err != nil {
			return err
		}
		b.s.outbound.Trust = t
	}
	if !cfg.OutboundClientCertEnabled {
		return nil
	}
	switch {
	case cfg.OutboundClientCertSource == config.CertSourceFile:
		id, err := certs.NewFileIdentity(cfg.OutboundClientCertFile, cfg.OutboundClientKeyFile, certs.DefaultPollInterval, b.certLog)
		if err != nil {
			return fmt.Errorf("outbound__clientAuth__clientCert: %w", err)
		}
		b.s.outbound.Identity = id
		b.s.runners = append(b.s.runners, id)
	case b.wl != nil:
		id, err := certs.NewIoTEdgeIdentity(ctx, b.wl, 0, b.certLog)
		if err != nil {
			return fmt.Errorf("fetching the module identity certificate: %w", err)
		}
		b.s.outbound.Identity = id
		b.s.runners = append(b.s.runners, id)
	default:
		b.log.Info().Msg("outside IoT Edge there is no module identity certificate: outbound TLS presents none")
	}
	return nil
}

// serverSource returns the server certificate's source; certLog goes to
// package certs, log takes this function's own warning.
func serverSource(ctx context.Context, cfg config.Config, wl *workload.Client, certLog, log zerolog.Logger) (certs.ServerSource, error) {
	switch {
	case cfg.ServerCertSource == config.CertSourceFile:
		src, err := certs.NewFileServer(cfg.ServerCertFile, cfg.ServerKeyFile, cfg.ServerCAFile, certs.DefaultPollInterval, certLog)
		if err != nil {
			return nil, fmt.Errorf("inbound__serverAuth__serverCert: %w", err)
		}
		return src, nil
	case wl != nil:
		cn := or(cfg.IoTEdgeGatewayHostName, cfg.IoTEdgeModuleID)
		src, err := certs.NewIoTEdgeServer(ctx, wl, cn, 0, certLog)
		if err != nil {
			return nil, fmt.Errorf("fetching the server certificate from the IoT Edge workload API: %w", err)
		}
		return src, nil
	}
	src, err := certs.NewSelfSigned(or(cfg.IoTEdgeModuleID, "eventgridmodule"))
	if err != nil {
		return nil, fmt.Errorf("making a self-signed server certificate: %w", err)
	}
	log.Warn().Msg("not running under IoT Edge (no IOTEDGE_WORKLOADURI): serving HTTPS with a self-signed certificate made at start; clients must skip verification or use inbound__serverAuth__serverCert__source=File")
	return src, nil
}

// start runs the refreshing sources until ctx is done.
func (s *security) start(ctx context.Context) {
	for _, r := range s.runners {
		go r.Run(ctx)
	}
}

// close stops the refreshing sources and waits for them.
func (s *security) close(ctx context.Context) error {
	var errs []error
	for _, r := range s.runners {
		errs = append(errs, r.Close(ctx))
	}
	return errors.Join(errs...)
}
