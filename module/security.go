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

	runners []interface {
		Run(context.Context)
		Close() error
	}
}

// setupSecurity builds the certificate sources and the authenticator from
// cfg: from the IoT Edge workload API when the broker runs under IoT Edge,
// from files when configured so, and otherwise a self-signed server
// certificate with a warning (binding decision 12).
func setupSecurity(ctx context.Context, cfg config.Config, log zerolog.Logger) (*security, error) {
	log = log.With().Str("component", "security").Logger()
	s := &security{}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.StartTimeoutSeconds)*time.Second)
	defer cancel()

	var wl *workload.Client
	if cfg.IoTEdgeWorkloadURI != "" {
		var err error
		wl, err = workload.New(cfg.IoTEdgeWorkloadURI, or(cfg.IoTEdgeAPIVersion, defaultWorkloadAPIVersion), cfg.IoTEdgeModuleID, cfg.IoTEdgeGenerationID)
		if err != nil {
			return nil, fmt.Errorf("IOTEDGE_WORKLOADURI: %w", err)
		}
	}
	// The IoT Edge trust bundle serves both inbound client certificates and
	// outbound server verification; fetch it once.
	var edgeTrust *certs.TrustBundle
	edgeTrustFn := func() (*certs.TrustBundle, error) {
		if edgeTrust == nil && wl != nil {
			t, err := certs.NewIoTEdgeTrust(ctx, wl, log)
			if err != nil {
				return nil, fmt.Errorf("fetching the IoT Edge trust bundle: %w", err)
			}
			edgeTrust = t
			s.runners = append(s.runners, t)
		}
		return edgeTrust, nil
	}

	if cfg.TLSPolicy != config.TLSDisabled {
		src, err := serverSource(ctx, cfg, wl, log)
		if err != nil {
			return nil, err
		}
		s.serverTLS = certs.ServerConfig(src, cfg.ClientCertEnabled)
		if r, ok := src.(interface {
			Run(context.Context)
			Close() error
		}); ok {
			s.runners = append(s.runners, r)
		}
	}

	var inboundTrust *certs.TrustBundle
	if cfg.ClientCertEnabled {
		switch {
		case cfg.ClientCertSource == config.CertSourceFile:
			t, err := certs.NewFileTrust(cfg.ClientCertCAFile, certs.DefaultPollInterval, log)
			if err != nil {
				return nil, fmt.Errorf("inbound__clientAuth__clientCert__caFile: %w", err)
			}
			inboundTrust = t
			s.runners = append(s.runners, t)
		case wl != nil:
			t, err := edgeTrustFn()
			if err != nil {
				return nil, err
			}
			inboundTrust = t
		case !cfg.ClientCertAllowUnknownCA:
			log.Warn().Msg("no IoT Edge trust bundle outside IoT Edge and inbound__clientAuth__clientCert__allowUnknownCA is false: every client certificate will be refused; set inbound__clientAuth__clientCert__source=File with a caFile")
		}
		if cfg.TLSPolicy == config.TLSDisabled && !cfg.SASKeysEnabled {
			log.Warn().Msg("client certificates are required but only plain HTTP is served and SAS keys are off: every request except /healthz will get 401")
		}
	}
	s.auth = auth.New(auth.Options{
		SASKeysEnabled:    cfg.SASKeysEnabled,
		Key1:              cfg.SASKey1,
		Key2:              cfg.SASKey2,
		ClientCertEnabled: cfg.ClientCertEnabled,
		AllowUnknownCA:    cfg.ClientCertAllowUnknownCA,
		Trust:             inboundTrust,
	})

	s.outbound = certs.OutboundOptions{
		SkipServerCertValidation: cfg.WebhookSkipServerCertValidation,
		AllowUnknownCA:           cfg.WebhookAllowUnknownCA,
	}
	if wl != nil {
		t, err := edgeTrustFn()
		if err != nil {
			return nil, err
		}
		s.outbound.Trust = t
	}
	if cfg.OutboundClientCertEnabled {
		switch {
		case cfg.OutboundClientCertSource == config.CertSourceFile:
			id, err := certs.NewFileIdentity(cfg.OutboundClientCertFile, cfg.OutboundClientKeyFile, certs.DefaultPollInterval, log)
			if err != nil {
				return nil, fmt.Errorf("outbound__clientAuth__clientCert: %w", err)
			}
			s.outbound.Identity = id
			s.runners = append(s.runners, id)
		case wl != nil:
			id, err := certs.NewIoTEdgeIdentity(ctx, wl, 0, log)
			if err != nil {
				return nil, fmt.Errorf("fetching the module identity certificate: %w", err)
			}
			s.outbound.Identity = id
			s.runners = append(s.runners, id)
		default:
			log.Info().Msg("outside IoT Edge there is no module identity certificate: outbound TLS presents none")
		}
	}
	return s, nil
}

func serverSource(ctx context.Context, cfg config.Config, wl *workload.Client, log zerolog.Logger) (certs.ServerSource, error) {
	switch {
	case cfg.ServerCertSource == config.CertSourceFile:
		src, err := certs.NewFileServer(cfg.ServerCertFile, cfg.ServerKeyFile, cfg.ServerCAFile, certs.DefaultPollInterval, log)
		if err != nil {
			return nil, fmt.Errorf("inbound__serverAuth__serverCert: %w", err)
		}
		return src, nil
	case wl != nil:
		cn := or(cfg.IoTEdgeGatewayHostName, cfg.IoTEdgeModuleID)
		src, err := certs.NewIoTEdgeServer(ctx, wl, cn, 0, log)
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
func (s *security) close() error {
	var errs []error
	for _, r := range s.runners {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}
