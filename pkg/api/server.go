package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/pull"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// Options configure the API.
type Options struct {
	// MaxContentLength caps request bodies; larger ones get 413 and are
	// never read whole.
	MaxContentLength int64
	// MaxDiscardBytes bounds how much of a refused request's body is read
	// and thrown away so that the client can read the refusal (B9).
	MaxDiscardBytes int64
	// IDPrefix is "/iotHubs/<hub>/devices/<device>/modules/<module>", the
	// start of every resource id.
	IDPrefix string
	// HealthProbe serves GET /healthz when true.
	HealthProbe bool
	// RequestTimeout bounds reading a whole request and writing its response.
	RequestTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// MaxHeaderBytes caps the size of a request's headers.
	MaxHeaderBytes int
	// RetryAfter is sent with 503 when the broker's queues are full.
	RetryAfter time.Duration
	// Metrics, if not nil, receives publish measurements.
	Metrics Metrics
	// MetricsHandler, if not nil, is served at GET /metrics.
	MetricsHandler http.Handler
	// Authenticator, if not nil, checks every request but the health probe.
	Authenticator Authenticator
	// Admit, if not nil, is asked before a publish body is read whether a
	// request of that many bytes could be queued; when it says no, the
	// request gets 503 without being read.
	Admit func(bytes int64) bool
	// DeliveryStatus, if not nil, adds the read-only deliveryStatus
	// extension to subscription responses.
	DeliveryStatus func(*eventgrid.EventSubscription) *resource.DeliveryStatus
	// Queues, if not nil, serves receive and the settlements of queue
	// subscriptions.
	Queues *pull.Store
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		MaxContentLength:  1058576,
		MaxDiscardBytes:   16 << 20,
		IDPrefix:          "/iotHubs/localhub/devices/localdevice/modules/eventgridmodule",
		HealthProbe:       true,
		RequestTimeout:    30 * time.Second,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    16 << 10,
		RetryAfter:        10 * time.Second,
	}
}

// Server is the broker's HTTP API. Create it with New, start listeners with
// Open and stop them all with Close.
type Server struct {
	opts      Options
	registry  *registry.Registry
	publisher eventgrid.Publisher
	log       zerolog.Logger
	echo      *echo.Echo

	mu      sync.Mutex
	servers []*http.Server
	wg      sync.WaitGroup
}

// New builds the API over a registry and a publisher. It starts nothing.
func New(opts Options, reg *registry.Registry, pub eventgrid.Publisher, logger zerolog.Logger) *Server {
	if opts.Metrics == nil {
		opts.Metrics = nopMetrics{}
	}
	s := &Server{
		opts:      opts,
		registry:  reg,
		publisher: pub,
		log:       logger.With().Str("component", "api").Logger(),
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	e.Pre(canonicalPath, trackBody)
	s.echo = e
	s.routes()
	return s
}

// Handler returns the API as an http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Open listens on addr, with TLS when tlsConfig is not nil, and serves the
// API there until Close. It returns the bound address (useful with port 0).
// Listening happens before Open returns, so bind errors are reported here.
func (s *Server) Open(addr string, tlsConfig *tls.Config) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.RequestTimeout,
		WriteTimeout:      s.opts.RequestTimeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    s.opts.MaxHeaderBytes,
		TLSConfig:         tlsConfig,
		ErrorLog:          newStdLogger(s.log),
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	s.mu.Lock()
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Str("addr", ln.Addr().String()).Msg("listener stopped")
		}
	}()
	return ln.Addr(), nil
}

// Close stops accepting connections and waits for in-flight requests until
// ctx is done, then closes what remains.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	servers := s.servers
	s.servers = nil
	s.mu.Unlock()
	var errs []error
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, err)
			_ = srv.Close()
		}
	}
	s.wg.Wait()
	return errors.Join(errs...)
}
