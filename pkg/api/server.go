package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Options configure the API: plain values, read from the configuration.
// What the API talks to is its Services.
type Options struct {
	// MaxContentLength caps request bodies; larger ones get 413 and are
	// never read whole.
	MaxContentLength int64
	// MaxBodyBytesInFlight bounds the memory held by request bodies being
	// read, across all requests (api__maxBodyBytesInFlight). A body takes
	// memory as its bytes arrive, in chunks; one that would take the total
	// past the bound is refused with 503 and Retry-After. 0: no bound.
	MaxBodyBytesInFlight int64
	// MaxDiscardBytes bounds how much of a refused request's body is read
	// and thrown away so that the client can read the refusal
	// (docs/design.md#requests-that-are-too-large).
	MaxDiscardBytes int64
	// IDPrefix is "/iotHubs/<hub>/devices/<device>/modules/<module>", the
	// start of every resource id.
	IDPrefix string
	// PublicHost is the host, or host:port, that topics' endpoint URLs
	// name; without a port, the port of the listener serving HTTPS (else
	// HTTP) is added. Endpoint URLs never echo the request's Host header,
	// which a client chooses. Empty means DefaultPublicHost.
	PublicHost string
	// HealthProbe serves GET /healthz (liveness) and GET /readyz
	// (readiness) when true.
	HealthProbe bool
	// RequestTimeout bounds reading a whole request and writing its response.
	RequestTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// MaxHeaderBytes caps the size of a request's request line and header
	// block together, in bytes; a larger one gets 431. net/http cannot cap
	// below 4097 bytes, so smaller values act as 4097.
	MaxHeaderBytes int
	// RetryAfter is sent with 503 when the broker's queues are full.
	RetryAfter time.Duration
	// AuthFailureLogInterval is the least time between two log lines about
	// refused requests; each line counts the refusals not logged before
	// it. Zero means DefaultAuthFailureLogInterval.
	AuthFailureLogInterval time.Duration
	// ReceiveGrace is how long Close lets receive answers being written
	// finish before it cuts them, so that a client reading slowly never
	// holds the stop; zero means DefaultReceiveGrace, negative cuts them
	// at once.
	ReceiveGrace time.Duration
	// MaxWaitingReceives is the broker's bound on receives waiting for
	// events (broker__maxWaitingReceives, which the queue store holds):
	// one client may have at most half of it in progress; 0: no share.
	MaxWaitingReceives int
	// MaxEventStreams bounds the live tails and outcome streams open at
	// once (api__maxEventStreams); 0 refuses them all.
	MaxEventStreams int
	// EventStreamHeartbeat is how often an idle event stream gets a
	// keep-alive comment; zero means DefaultEventStreamHeartbeat.
	EventStreamHeartbeat time.Duration
	// MaxConnections bounds the client connections open at once, across
	// the listeners (api__maxConnections, see conns.go); zero means
	// DefaultMaxConnections.
	MaxConnections int
	// StopGrace is how long Close keeps a connection that is idle, or has
	// not sent its request yet, open for a request already on its way
	// (answered 503 with Connection: close) before it closes it; zero
	// means DefaultStopGrace, negative closes them at once.
	StopGrace time.Duration
}

// Services are the parts of the broker the API serves from. Resources and
// Publisher are required; each of the others, when nil, leaves out what
// it serves.
type Services struct {
	// Resources are the topics and event subscriptions (the registry);
	// Publisher takes the published events (the registry's router).
	Resources Resources
	Publisher Publisher
	// Readiness says whether the broker is ready for traffic (/readyz
	// answers 503 while it is not) and what /readyz shows of the declared
	// configuration; nil means always ready.
	Readiness Readiness
	// Authenticator checks every request of a route that needs a
	// permission (permissions.go); nil lets every request through.
	Authenticator Authenticator
	// Admitter is asked before a publish body is read whether a request
	// of that many bytes could be queued; it may wait a little for room,
	// until the request's context is done. When it says no, the request
	// gets 503 (or 413) without being read.
	Admitter Admitter
	// Status adds the read-only deliveryStatus extension to subscription
	// responses.
	Status Status
	// Queues serves receive and the settlements of queue subscriptions.
	Queues Queues
	// Board and Held serve the inspection API
	// (docs/console.md#the-inspection-api): topics' statistics, history,
	// the events given up on and the live streams from the board; peek
	// and the operator's actions from Held.
	Board Board
	Held  Held
	// Metrics receives publish measurements; MetricsHandler is served at
	// GET /metrics.
	Metrics        Metrics
	MetricsHandler http.Handler
	// Console serves the console page at /console/ (docs/console.md),
	// without authentication: its files hold no data, and the page's data
	// calls are authenticated like any client's.
	Console http.Handler
}

// Readiness is what /readyz asks (the declared configuration's
// reconciler): whether the broker is ready for traffic, and what to show
// of it, as the answer's "desiredConfig" member (omitted when nil): the
// entries skipped, which someone who only sees the probe must be able to
// find.
type Readiness interface {
	Ready() bool
	ReadyDetail() any
}

// DefaultPublicHost is the module name Microsoft's documentation addresses
// the broker by from other modules: https://eventgridmodule:4438/topics/...
const DefaultPublicHost = "eventgridmodule"

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		MaxContentLength: 1058576,
		MaxDiscardBytes:  16 << 20,
		// A quarter of the broker's default queued bytes.
		MaxBodyBytesInFlight: 64 << 20,
		IDPrefix:             "/iotHubs/localhub/devices/localdevice/modules/eventgridmodule",
		PublicHost:           DefaultPublicHost,
		HealthProbe:          true,
		RequestTimeout:       30 * time.Second,
		ReadHeaderTimeout:    10 * time.Second,
		MaxHeaderBytes:       16 << 10,
		RetryAfter:           10 * time.Second,
		MaxEventStreams:      32,
		EventStreamHeartbeat: DefaultEventStreamHeartbeat,
		MaxConnections:       DefaultMaxConnections,
	}
}

// Server is the broker's HTTP API. Create it with New, start listeners with
// Open and stop them all with Close.
type Server struct {
	opts      Options
	svc       Services
	resources Resources
	publisher Publisher
	log       zerolog.Logger
	echo      *echo.Echo
	authLog   logLimiter
	bodies    bytesInFlight // bytes of request bodies being read
	answers   answerSet     // receive answers being written
	streams   shareSet      // event streams open
	polls     shareSet      // receives in progress
	conns     *connSet      // client connections open
	// stopping is set once Close has begun: every answer written from then
	// on closes its connection, and a request read from then on is
	// answered 503. closing is done then too: receives still waiting for
	// events end at once, with none, and event streams end.
	stopping     atomic.Bool
	closing      context.Context
	closeWaiting context.CancelFunc

	mu        sync.Mutex
	servers   []*http.Server
	listeners []*boundedListener
	baseURL   string // of topics' endpoints, from the first HTTPS listener, else the first HTTP one
	tlsBase   bool   // baseURL is the HTTPS listener's
	wg        sync.WaitGroup
}

// New builds the API over the topics and subscriptions it manages and the
// publisher of the events it accepts. It starts nothing.
func New(opts Options, svc Services, logger zerolog.Logger) *Server {
	if svc.Metrics == nil {
		svc.Metrics = nopMetrics{}
	}
	if opts.PublicHost == "" {
		opts.PublicHost = DefaultPublicHost
	}
	if opts.AuthFailureLogInterval <= 0 {
		opts.AuthFailureLogInterval = DefaultAuthFailureLogInterval
	}
	if opts.ReceiveGrace == 0 {
		opts.ReceiveGrace = DefaultReceiveGrace
	}
	if opts.EventStreamHeartbeat <= 0 {
		opts.EventStreamHeartbeat = DefaultEventStreamHeartbeat
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = DefaultStopGrace
	}
	s := &Server{
		authLog:   logLimiter{interval: opts.AuthFailureLogInterval},
		opts:      opts,
		svc:       svc,
		resources: svc.Resources,
		publisher: svc.Publisher,
		log:       logger.With().Str("component", "api").Logger(),
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	e.Pre(s.refuseWhileStopping, canonicalPath, trackBody)
	s.echo = e
	s.conns = newConnSet(opts.MaxConnections, s.log)
	s.bodies.limit = opts.MaxBodyBytesInFlight
	s.closing, s.closeWaiting = context.WithCancel(context.Background())
	s.routes()
	return s
}

// Handler returns the API as an http.Handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// serveHTTP serves a request with the echo router, through a writer that
// makes every answer written once Close has begun close its connection.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.echo.ServeHTTP(&stopWriter{ResponseWriter: w, stopping: &s.stopping}, r)
}

// stopWriter adds Connection: close to an answer whose head is written
// once the broker stops, even one whose request came before (a receive
// that waited for events): its client then opens a new connection, to
// another instance, instead of sending its next request down one the
// broker is about to close.
type stopWriter struct {
	http.ResponseWriter
	stopping *atomic.Bool
	wrote    bool
}

func (w *stopWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		if w.stopping.Load() {
			w.Header().Set(echo.HeaderConnection, "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *stopWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the connection's writer.
func (w *stopWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refuseWhileStopping answers 503 with Retry-After to a request read once
// Close has begun, before anything else; its answer closes the connection.
func (s *Server) refuseWhileStopping(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.stopping.Load() {
			return &retryAfterError{seconds: s.retryAfterSeconds(), closeConn: true,
				err: eventgrid.Errorf(eventgrid.EUnavailable, "The broker is stopping; retry later, or with another instance.")}
		}
		return next(c)
	}
}

// Open listens on addr, with TLS when tlsConfig is not nil, and serves the
// API there until Close. It returns the bound address (useful with port 0).
// Listening happens before Open returns, so bind errors are reported here.
func (s *Server) Open(addr string, tlsConfig *tls.Config) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ConnState:         s.conns.setState,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.RequestTimeout,
		WriteTimeout:      s.opts.RequestTimeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    serverHeaderBytes(s.opts.MaxHeaderBytes),
		TLSConfig:         tlsConfig,
		ErrorLog:          newStdLogger(s.log),
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	bl := &boundedListener{Listener: ln, set: s.conns}
	s.mu.Lock()
	s.servers = append(s.servers, srv)
	s.listeners = append(s.listeners, bl)
	if s.baseURL == "" || (tlsConfig != nil && !s.tlsBase) {
		s.baseURL, s.tlsBase = publicBaseURL(s.opts.PublicHost, tlsConfig != nil, ln.Addr()), tlsConfig != nil
	}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.Serve(bl); err != nil && !errors.Is(err, http.ErrServerClosed) && !s.stopping.Load() {
			s.log.Error().Err(err).Str("addr", ln.Addr().String()).Msg("listener stopped")
		}
	}()
	return ln.Addr(), nil
}

// publicBaseURL is scheme://host:port of the topics' endpoints when the
// listener at addr serves them.
func publicBaseURL(host string, tls bool, addr net.Addr) string {
	scheme := "http"
	if tls {
		scheme = "https"
	}
	if _, _, err := net.SplitHostPort(host); err == nil {
		return scheme + "://" + host
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	port := "0"
	if _, p, err := net.SplitHostPort(addr.String()); err == nil {
		port = p
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// endpointBase returns the base URL of the topics' endpoints.
func (s *Server) endpointBase() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.baseURL == "" { // served through Handler, with no listener of its own
		return "http://" + s.opts.PublicHost
	}
	return s.baseURL
}

// headerSlack is what net/http reads beyond http.Server.MaxHeaderBytes
// before it answers 431 (its "bufio slop").
const headerSlack = 4096

// serverHeaderBytes is the http.Server.MaxHeaderBytes that makes the real cap
// on a request's line and headers limit bytes.
func serverHeaderBytes(limit int) int {
	return max(limit-headerSlack, 1)
}

// Close stops the API within ctx (docs/delivery.md#stopping): it stops
// accepting connections (new ones are refused), answers every request it
// has read, and closes each connection once it is done with it.
//
// From the start of Close, every answer written closes its connection
// (Connection: close) and a request read is answered 503 with
// Retry-After. Receives still waiting for events answer at once, with
// none, and event streams end; receive answers still being written after
// Options.ReceiveGrace are cut. A connection idle, or not yet sending a
// request, is kept open for Options.StopGrace since the start of Close or
// since its last answer, for a request already on its way, then closed.
// What is still open when ctx is done is closed, and Close returns an
// error.
func (s *Server) Close(ctx context.Context) error {
	stopped := time.Now()
	s.stopping.Store(true)
	s.mu.Lock()
	servers, listeners := s.servers, s.listeners
	s.servers, s.listeners = nil, nil
	s.mu.Unlock()
	for _, l := range listeners {
		_ = l.Close()
	}
	s.closeWaiting()
	cut := time.AfterFunc(max(s.opts.ReceiveGrace, 0), s.answers.cutAll)
	defer cut.Stop()
	var errs []error
	if err := s.conns.drain(ctx, stopped, max(s.opts.StopGrace, 0)); err != nil {
		errs = append(errs, fmt.Errorf("api: %d connections still open at the stop timeout: %w", s.conns.open(), err))
	}
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
	}
	s.conns.closeAll()
	s.wg.Wait()
	return errors.Join(errs...)
}
