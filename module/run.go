package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/deadletter"
	"github.com/edgegrid/edgegrid/pkg/delivery"
	"github.com/edgegrid/edgegrid/pkg/edgehub"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/pull"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/schema"
	"github.com/edgegrid/edgegrid/pkg/servicebus"
	"github.com/edgegrid/edgegrid/pkg/storagequeue"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// listening is told each listener's address once it is bound; tests use it
// to find ports chosen by the system.
type listening func(scheme string, addr net.Addr)

// run wires the broker from cfg and serves until ctx is done, then shuts
// down: listeners stop accepting, requests in flight finish, deliveries in
// flight get the stop timeout, and queued events are discarded.
func run(ctx context.Context, cfg config.Config, log zerolog.Logger, onListen listening) error {
	log.Info().Str("version", version).Interface("config", cfg.Fields()).Msg("edgegrid starting with this configuration")
	if cfg.DefaultIsPersisted || cfg.BackoffIsPersisted {
		log.Warn().Msg("broker__defaultIsPersisted and broker__backoffIsPersisted are ignored: events are kept in memory by design")
	}
	if cfg.PprofAddress != "" {
		stopPprof, err := startPprof(cfg.PprofAddress, log)
		if err != nil {
			return fmt.Errorf("debug__pprofAddress: %w", err)
		}
		defer stopPprof()
	}
	sec, err := setupSecurity(ctx, cfg, log)
	if err != nil {
		return err
	}
	sec.start(ctx)
	defer func() {
		if err := sec.close(); err != nil {
			log.Warn().Err(err).Msg("stopping certificate refresh")
		}
	}()
	rep, prom, stopReporter := newReporter(ctx, cfg, log)
	defer stopReporter()
	out, err := newSenders(cfg, sec, log)
	if err != nil {
		return err
	}
	defer out.close() // after the engine: deliveries in flight finish first
	b := newBroker(cfg, out, rep, prom, sec, log)
	if err := b.start(ctx, cfg, sec, log, onListen); err != nil {
		return err
	}
	<-ctx.Done()
	b.stop(cfg, log)
	return nil
}

// senders are the destinations' senders.
type senders struct {
	router delivery.Router
	hooks  *webhook.Sender
	queues *storagequeue.Sender
	edge   *edgehub.Client
	close  func()
}

// newSenders builds a sender for each destination type, sharing the
// outbound TLS settings.
func newSenders(cfg config.Config, sec *security, log zerolog.Logger) (*senders, error) {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	// As many connections per host as the engine has requests in flight,
	// parked ones included: a host with hung paths must leave room for its
	// healthy ones.
	maxConns := deliveryOptions(cfg).MaxRequests()
	hooks := webhook.New(webhook.Options{
		TLSConfig:       certs.OutboundConfig(sec.outbound),
		DialTLSContext:  certs.DialTLS(sec.outbound, dialer),
		MaxConnsPerHost: maxConns,
		UserAgent:       "edgegrid/" + version,
		Interop:         interopOptions(cfg),
	})
	bus := servicebus.New(servicebus.Options{
		TLSConfig:       certs.OutboundConfig(sec.outbound),
		DialTLSContext:  certs.DialTLS(sec.outbound, dialer),
		MaxConnsPerHost: maxConns,
		UserAgent:       "edgegrid/" + version,
	})
	edge, err := newEdgeHub(cfg, log)
	if err != nil {
		return nil, err
	}
	queues := storagequeue.New()
	s := &senders{
		router: delivery.Router{
			eventgrid.WebHook:         hooks,
			eventgrid.EventGrid:       hooks,
			eventgrid.EventHub:        bus,
			eventgrid.ServiceBusQueue: bus,
			eventgrid.ServiceBusTopic: bus,
			eventgrid.StorageQueue:    queues,
		},
		hooks:  hooks,
		queues: queues,
		edge:   edge,
		close:  func() {},
	}
	if edge != nil {
		s.router[eventgrid.EdgeHub] = edge
		s.close = func() { edge.Close() }
	}
	return s, nil
}

// broker is the wired broker: the delivery engine, its dead-letter writer,
// the registry and the API.
type broker struct {
	engine      *delivery.Engine
	deadLetters *deadletter.Writer
	registry    *registry.Registry
	api         *api.Server
	// pulled holds the queue subscriptions' events.
	pulled *pull.Store
	// edge is the edgeHub connection (nil outside IoT Edge), which also
	// carries the module twin.
	edge *edgehub.Client
	// ready reports whether every desired-configuration source has been
	// applied once; set by start before the listeners open.
	ready func() bool
}

// newBroker wires the engine, the dead-letter writer, the registry and the
// API over the senders and the metrics reporter (rep and prom may be nil).
func newBroker(cfg config.Config, out *senders, rep reporter, prom *metrics.Prometheus, sec *security, log zerolog.Logger) *broker {
	dlOpts := deadletter.Options{
		FlushInterval: time.Duration(cfg.DeadLetterFlushIntervalSeconds) * time.Second,
		MaxWait:       time.Duration(cfg.DeadLetterMaxWaitSeconds) * time.Second,
	}
	if prom != nil {
		dlOpts.Metrics = prom
	}
	b := &broker{deadLetters: deadletter.New(dlOpts, log), edge: out.edge}
	engineOpts := deliveryOptions(cfg)
	engineOpts.DeadLetterer = b.deadLetters
	var engineMetrics delivery.Metrics
	if rep != nil {
		engineMetrics = rep
	}
	b.engine = delivery.New(engineOpts, out.router, engineMetrics, log)
	var pullMetrics *metrics.Pull
	b.pulled, pullMetrics = newQueues(cfg, b.engine, b.deadLetters, prom, log)
	obs := observers{&pull.PushObserver{Next: b.engine}, b.pulled, out.hooks, out.queues}
	if pullMetrics != nil {
		obs = append(obs, pullMetrics)
	}
	apiOpts := apiOptions(cfg)
	apiOpts.Authenticator = sec.auth
	apiOpts.DeliveryStatus = withQueueStatus(b.pulled, deliveryStatus(b.engine))
	apiOpts.Queues = b.pulled
	apiOpts.Admit = b.engine.AdmitWait
	if rep != nil {
		rep.Collect(b.engine.Stats)
		obs = append(obs, rep)
		apiOpts.Metrics = rep
	}
	if prom != nil {
		// /metrics is served on the API's listeners behind the API's
		// authentication, as the original module served it.
		apiOpts.MetricsHandler = prom.Handler()
	}
	regOpts := registryOptions(cfg)
	regOpts.Handshake = out.hooks.Handshake
	b.registry = registry.New(regOpts, obs)
	// /readyz asks the desired configuration's sources, which start
	// follows before any listener opens.
	apiOpts.Ready = func() bool { return b.ready() }
	b.api = api.New(apiOpts, b.registry, pull.Publisher{Store: b.pulled, Push: b.engine}, log)
	return b
}

// start applies the desired configuration, keeps following its live
// sources, and opens the listeners; on failure it stops what it started.
func (b *broker) start(ctx context.Context, cfg config.Config, sec *security, log zerolog.Logger, onListen listening) error {
	ready, err := startDesiredConfig(ctx, cfg, b.registry, b.edge, log)
	if err != nil {
		b.pulled.Close()
		b.engine.Close(0)
		b.deadLetters.Close(context.Background())
		return err
	}
	b.ready = ready
	if err := openListeners(cfg, b.api, sec, log, onListen); err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = b.api.Close(sctx)
		b.pulled.Close()
		b.engine.Close(0)
		b.deadLetters.Close(context.Background())
		return err
	}
	return nil
}

// stop shuts down within broker__stopTimeoutInSeconds: the listeners stop
// accepting and requests in flight finish, then deliveries in flight, then
// the dead letters get what is left, and a second at least.
func (b *broker) stop(cfg config.Config, log zerolog.Logger) {
	log.Info().Int("stopTimeoutSeconds", cfg.StopTimeoutSeconds).Msg("stopping: no longer accepting requests")
	deadline := time.Now().Add(time.Duration(cfg.StopTimeoutSeconds) * time.Second)
	sctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	// Receives waiting for events answer at once, with none; the events
	// still queued are dropped and counted.
	b.pulled.Close()
	if err := b.api.Close(sctx); err != nil {
		log.Warn().Err(err).Msg("requests still in flight at the stop timeout were cut off")
	}
	b.engine.Close(time.Until(deadline))
	dctx, dcancel := context.WithDeadline(context.Background(), maxTime(deadline, time.Now().Add(time.Second)))
	defer dcancel()
	if n := b.deadLetters.Close(dctx); n > 0 {
		log.Warn().Int("events", n).Msg("dead letters not written before the stop timeout were dropped")
	}
	log.Info().Msg("edgegrid stopped")
}

// openListeners opens the listeners inbound__serverAuth__tlsPolicy asks
// for: HTTPS on api__httpsPort (strict, enabled) and plain HTTP on
// api__httpPort (enabled, disabled).
func openListeners(cfg config.Config, srv *api.Server, sec *security, log zerolog.Logger, onListen listening) error {
	type listener struct {
		scheme string
		port   int
		tls    bool
	}
	var ls []listener
	if cfg.TLSPolicy != config.TLSDisabled {
		ls = append(ls, listener{"https", cfg.HTTPSPort, true})
	}
	if cfg.TLSPolicy != config.TLSStrict {
		ls = append(ls, listener{"http", cfg.HTTPPort, false})
	}
	for _, l := range ls {
		var tc *tls.Config
		if l.tls {
			tc = sec.serverTLS
		}
		addr, err := srv.Open(net.JoinHostPort(cfg.BindAddress, strconv.Itoa(l.port)), tc)
		if err != nil {
			return err
		}
		log.Info().Str("scheme", l.scheme).Str("addr", addr.String()).Msg("listening")
		if onListen != nil {
			onListen(l.scheme, addr)
		}
	}
	return nil
}

func deliveryOptions(cfg config.Config) delivery.Options {
	return delivery.Options{
		DefaultMaxDeliveryAttempts:     cfg.DefaultMaxDeliveryAttempts,
		DefaultTTL:                     time.Duration(cfg.DefaultEventTTLSeconds) * time.Second,
		DefaultMaxEventsPerBatch:       cfg.DefaultMaxEventsPerBatch,
		DefaultMaxBatchBytes:           cfg.DefaultMaxBatchSizeInBytes,
		Backoff:                        [2]time.Duration{cfg.BackoffIntervals[0], cfg.BackoffIntervals[1]},
		DeliverTimeout:                 time.Duration(cfg.DeliverTimeoutSeconds) * time.Second,
		MaxConcurrent:                  cfg.MaxConcurrentDeliveries,
		MaxPerSubscription:             cfg.MaxDeliveriesPerSubscription,
		MaxQueuedEvents:                cfg.MaxQueuedEvents,
		MaxQueuedBytes:                 cfg.MaxQueuedBytes,
		MaxQueuedEventsPerSubscription: cfg.MaxQueuedEventsPerSubscription,
		MaxQueuedBytesPerSubscription:  cfg.MaxQueuedBytesPerSubscription,
		DefaultSchedule:                eventgrid.RetrySchedule(cfg.DefaultRetrySchedule),
		ExponentialScale:               float64(cfg.ExponentialScale),
		ProbationAfterFailures:         cfg.ProbationAfterFailures,
		Transform:                      convertSchema,
		LogDeliverySuccess:             cfg.LogDeliverySuccess,
		LogDeliveryFailure:             cfg.LogDeliveryFailure,
		LogEventExpiry:                 cfg.LogEventExpiry,
	}
}

func registryOptions(cfg config.Config) registry.Options {
	return registry.Options{
		MaxTopics:                      cfg.MaxTopics,
		MaxSubscriptionsPerTopic:       cfg.MaxSubscriptionsPerTopic,
		MaxNameLength:                  cfg.MaxTopicNameLength,
		Filter:                         filter.Limits{MaxAdvancedFilters: cfg.MaxAdvancedFilters, MaxValuesPerFilter: cfg.MaxFilterValues, MaxStringLength: cfg.MaxFilterStringLength, MaxIncludedEventTypes: cfg.MaxIncludedEventTypes},
		MinExpiryMinutes:               cfg.RetryMinExpirationMinutes,
		MaxExpiryMinutes:               cfg.RetryMaxExpirationMinutes,
		MaxDeliveryAttempts:            cfg.RetryMaxDeliveryAttempts,
		MaxEventsPerBatch:              cfg.MaxEventsPerBatchLimit,
		MaxPreferredBatchSizeKB:        cfg.MaxPreferredBatchSizeKBLimit,
		WebhookHTTPSOnly:               cfg.WebhookHTTPSOnly,
		EventGridHTTPSOnly:             cfg.EventGridHTTPSOnly,
		EventGridAllowInvalidHostnames: cfg.EventGridAllowInvalidHostnames,
		SkipEventGridURLValidation:     cfg.WebhookSkipEventGridURLValidation,
		EdgeHubAvailable:               edgeHubAvailable(cfg),
	}
}

func apiOptions(cfg config.Config) api.Options {
	return api.Options{
		MaxContentLength:     int64(cfg.MaxContentLength),
		MaxDiscardBytes:      cfg.MaxDiscardBytes,
		MaxBodyBytesInFlight: bodyBudget(cfg),
		IDPrefix:             idPrefix(cfg),
		PublicHost:           or(cfg.PublicHost, or(cfg.IoTEdgeModuleID, api.DefaultPublicHost)),
		HealthProbe:          cfg.HealthProbeEnabled,
		RequestTimeout:       time.Duration(cfg.RequestTimeoutSeconds) * time.Second,
		ReadHeaderTimeout:    time.Duration(cfg.ReadHeaderTimeoutSeconds) * time.Second,
		MaxHeaderBytes:       cfg.MaxHeaderBytes,
		RetryAfter:           min(max(cfg.BackoffIntervals[0], time.Second), time.Minute),
	}
}

// bodyBudget is api__maxBodyBytesInFlight, or by default a quarter of
// broker__maxQueuedBytes: room for the bodies that fill the queues, never
// less than one body of the largest size.
func bodyBudget(cfg config.Config) int64 {
	if cfg.MaxBodyBytesInFlight > 0 {
		return cfg.MaxBodyBytesInFlight
	}
	return max(cfg.MaxQueuedBytes/4, int64(cfg.MaxContentLength))
}

// idPrefix builds "/iotHubs/<hub>/devices/<device>/modules/<module>" from
// the IoT Edge runtime's variables, with placeholders outside IoT Edge.
func idPrefix(cfg config.Config) string {
	hub, _, _ := strings.Cut(cfg.IoTEdgeHubHostName, ".")
	return "/iotHubs/" + or(hub, "localhub") + "/devices/" + or(cfg.IoTEdgeDeviceID, "localdevice") +
		"/modules/" + or(cfg.IoTEdgeModuleID, "eventgridmodule")
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// convertSchema gives a subscription that asks for CloudEvents on an
// EventGridSchema topic the converted event (docs/design.md#schema-conversion).
// Publishing validated the
// EventGridSchema event, so the conversion cannot fail on one; should it,
// the event goes as it is rather than not at all.
func convertSchema(topic eventgrid.Topic, sub *eventgrid.EventSubscription, body []byte) []byte {
	if !schema.Converts(topic.InputSchema, sub.EventDeliverySchema) {
		return body
	}
	if out, err := schema.EventGridToCloudEvent(body); err == nil {
		return out
	}
	return body
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
