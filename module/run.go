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
	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/certs"
	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/console"
	"github.com/edgegrid/edgegrid/pkg/deadletter"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/edgehub"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/registry"
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
// down within broker__stopTimeoutInSeconds: listeners stop accepting,
// requests in flight finish, deliveries in flight get what is left of the
// stop timeout, and queued events are discarded (see lifecycle). A failed
// start closes what it had started, the same way.
func run(ctx context.Context, cfg config.Config, log zerolog.Logger, onListen listening) error {
	log.Info().Str("version", version).Interface("config", cfg.Fields()).Msg("edgegrid starting with this configuration")
	if cfg.DefaultIsPersisted || cfg.BackoffIsPersisted {
		log.Warn().Msg("broker__defaultIsPersisted and broker__backoffIsPersisted are ignored: events are kept in memory by design")
	}
	lc := &lifecycle{log: log}
	if err := start(ctx, cfg, log, onListen, lc); err != nil {
		lc.stop(cfg)
		return err
	}
	<-ctx.Done()
	log.Info().Int("stopTimeoutSeconds", cfg.StopTimeoutSeconds).Msg("stopping: no longer accepting requests")
	lc.stop(cfg)
	log.Info().Msg("edgegrid stopped")
	return nil
}

// start starts the broker's components in order, adding each to lc as it
// starts: profiling, certificates, metrics, the senders (the webhook
// sender's connections), the delivery modes, the listeners, and last the
// followers of the declared configuration.
func start(ctx context.Context, cfg config.Config, log zerolog.Logger, onListen listening, lc *lifecycle) error {
	if cfg.PprofAddress != "" {
		stopPprof, err := startPprof(cfg.PprofAddress, log)
		if err != nil {
			return fmt.Errorf("debug__pprofAddress: %w", err)
		}
		lc.add("pprof", ignoringContext(stopPprof))
	}
	sec, err := setupSecurity(ctx, cfg, log)
	if err != nil {
		return err
	}
	sec.start(ctx)
	lc.add("certs", sec.close)
	rep, prom, closeReporter := newReporter(ctx, cfg, log)
	lc.add("metrics", closeReporter)
	out, err := newSenders(cfg, sec, log)
	if err != nil {
		return err
	}
	// Closed after the delivery modes and the API, which send through it.
	lc.add("webhook", out.hooks.Close)
	lc.add("servicebus", out.bus.Close)
	if out.edge != nil {
		lc.add("edgehub", out.edge.Close)
	}
	b, err := newBroker(cfg, out, rep, prom, sec, log, lc)
	if err != nil {
		return err
	}
	lc.add("api", b.api.Close)
	if err := openListeners(cfg, b.api, sec, log, onListen); err != nil {
		return err
	}
	// The declaration is applied, and followed, in the background, so
	// that /healthz answers whatever declared endpoints do.
	b.declared.follow(ctx)
	lc.add("desired", b.declared.close)
	return nil
}

// senders are the destinations' senders.
type senders struct {
	byType push.Senders
	hooks  *webhook.Sender
	bus    *servicebus.Sender
	queues *storagequeue.Sender
	edge   *edgehub.Client
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
		byType: push.Senders{
			eventgrid.WebHook:         hooks,
			eventgrid.EventGrid:       hooks,
			eventgrid.EventHub:        bus,
			eventgrid.ServiceBusQueue: bus,
			eventgrid.ServiceBusTopic: bus,
			eventgrid.StorageQueue:    queues,
		},
		hooks:  hooks,
		bus:    bus,
		queues: queues,
		edge:   edge,
	}
	if edge != nil {
		s.byType[eventgrid.EdgeHub] = edge
	}
	return s, nil
}

// broker is the wired broker: the delivery engine, its dead-letter writer,
// the registry and the API.
type broker struct {
	engine      *push.Engine
	deadLetters *deadletter.Writer
	registry    *registry.Registry
	api         *api.Server
	// pulled holds the queue subscriptions' events.
	pulled *queue.Store
	// dispatcher splits publications between engine and pulled.
	dispatcher *dispatch.Dispatcher
	// board keeps what the inspection API shows beyond the queues.
	board *inspect.Board
	// edge is the edgeHub connection (nil outside IoT Edge), which also
	// carries the module twin.
	edge *edgehub.Client
	// declared follows the declared configuration's sources; it starts
	// following them once the listeners are open.
	declared *declared
	// reconciler is told of deletions for declared's reconciler, which
	// needs the registry and so comes after it.
	reconciler lateReconciler
}

// newBroker wires the delivery modes, the registry, the declared
// configuration's reconciler and the API over the senders and the metrics
// reporter (rep and prom may be nil), adding what it starts to lc. It
// fails when the declared configuration cannot be read.
func newBroker(cfg config.Config, out *senders, rep reporter, prom *metrics.Prometheus, sec *security, log zerolog.Logger, lc *lifecycle) (*broker, error) {
	b := &broker{edge: out.edge}
	b.newBoard(cfg)
	b.startModes(cfg, out, rep, prom, log, lc)
	b.startBoard(lc)
	// The dead-letter writer is told too: a deleted subscription's letters
	// waiting for storage leave the budget at once. The board is told
	// first, so that a new subscription's record is there before its
	// queue.
	obs := observers{b.board, b.dispatcher, out.hooks, out.queues, b.deadLetters, &b.reconciler}
	svc := api.Services{
		Authenticator: sec.auth,
		Admitter:      b.dispatcher,
		Status:        b.dispatcher,
		Queues:        b.pulled,
		Board:         b.board,
		Held:          b.dispatcher,
	}
	if cfg.ConsoleEnabled {
		svc.Console = console.New()
	}
	if rep != nil {
		rep.Collect(b.engine.Stats)
		rep.CollectHeld(b.dispatcher.Holdings)
		rep.CollectQueues(b.pulled.Stats)
		obs = append(obs, rep)
		svc.Metrics = rep
	}
	if prom != nil {
		// /metrics is served on the API's listeners behind the API's
		// authentication, as the original module served it.
		svc.MetricsHandler = prom.Handler()
	}
	regOpts := registryOptions(cfg)
	regOpts.Handshake = out.hooks.Handshake
	b.registry = registry.New(regOpts, obs)
	var err error
	if b.declared, err = newDeclared(cfg, b.registry, b.edge, log); err != nil {
		return nil, err
	}
	b.reconciler.Store(b.declared.rec)
	// /readyz asks the declared configuration's sources and shows their
	// status.
	svc.Readiness = b.declared
	svc.Resources, svc.Publisher = b.registry, registry.NewRouter(b.registry, b.dispatcher)
	b.api = api.New(apiOptions(cfg), svc, log)
	return b, nil
}

// startModes starts the delivery side: the dead-letter writer, the push
// engine and the queue store, each added to lc, reporting through one
// reporter, and the dispatcher over them, sharing one budget.
func (b *broker) startModes(cfg config.Config, out *senders, rep reporter, prom *metrics.Prometheus, log zerolog.Logger, lc *lifecycle) {
	dlOpts := deadletter.Options{
		FlushInterval: time.Duration(cfg.DeadLetterFlushIntervalSeconds) * time.Second,
		MaxWait:       time.Duration(cfg.DeadLetterMaxWaitSeconds) * time.Second,
	}
	if prom != nil {
		dlOpts.Metrics = prom
	}
	b.deadLetters = deadletter.New(dlOpts, log)
	// The dead letters get what is left of the stop timeout, and a second
	// at least.
	lc.add("deadletter", atLeast(time.Second, b.deadLetters.Close))
	// What happens to deliveries, push or queue, is told once, by one
	// reporter, to the logs, the metrics, the board and the dead letters.
	outOpts := outcome.Options{DeliveryLogs: deliveryLogs(cfg), Board: b.board, DeadLetterer: b.deadLetters}
	if rep != nil {
		outOpts.Metrics = rep
	}
	reports := outcome.New(outOpts, log)
	// One budget for both modes, which the dispatcher claims for every
	// request and the modes give back as their events go.
	bud := budget.New(budgetLimits(cfg))
	engineOpts := deliveryOptions(cfg)
	engineOpts.Reporter, engineOpts.Budget = reports, bud
	b.engine = push.New(engineOpts, out.byType, nil, log)
	lc.add("delivery", b.engine.Close)
	b.pulled = newQueues(cfg, reports, log)
	lc.add("pull", b.pulled.Close)
	dispatchOpts := dispatch.Options{
		Budget:      bud,
		Push:        b.engine,
		Queues:      b.pulled,
		Transform:   registry.Convert,
		PublishHold: publishHold(cfg),
	}
	if rep != nil {
		dispatchOpts.Metrics = rep
	}
	b.dispatcher = dispatch.New(dispatchOpts)
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

func deliveryOptions(cfg config.Config) push.Options {
	return push.Options{
		DefaultMaxDeliveryAttempts: cfg.DefaultMaxDeliveryAttempts,
		DefaultTTL:                 time.Duration(cfg.DefaultEventTTLSeconds) * time.Second,
		DefaultMaxEventsPerBatch:   cfg.DefaultMaxEventsPerBatch,
		DefaultMaxBatchBytes:       cfg.DefaultMaxBatchSizeInBytes,
		Backoff:                    [2]time.Duration{cfg.BackoffIntervals[0], cfg.BackoffIntervals[1]},
		DeliverTimeout:             time.Duration(cfg.DeliverTimeoutSeconds) * time.Second,
		MaxConcurrent:              cfg.MaxConcurrentDeliveries,
		MaxPerSubscription:         cfg.MaxDeliveriesPerSubscription,
		DefaultSchedule:            eventgrid.RetrySchedule(cfg.DefaultRetrySchedule),
		ExponentialScale:           float64(cfg.ExponentialScale),
		ProbationAfterFailures:     cfg.ProbationAfterFailures,
	}
}

// budgetLimits are the bounds of the broker's budget
// (docs/delivery.md#bounded-queues).
func budgetLimits(cfg config.Config) budget.Limits {
	return budget.Limits{
		Events:                int64(cfg.MaxQueuedEvents),
		Bytes:                 cfg.MaxQueuedBytes,
		EventsPerSubscription: int64(cfg.MaxQueuedEventsPerSubscription),
		BytesPerSubscription:  cfg.MaxQueuedBytesPerSubscription,
	}
}

// publishHold is broker__publishHoldInMilliseconds, at most half of
// api__requestTimeoutInSeconds: a request held for room before its body is
// read still has time to read it, and one held after has time to be
// answered before the server's write timeout.
func publishHold(cfg config.Config) time.Duration {
	hold := time.Duration(cfg.PublishHoldMilliseconds) * time.Millisecond
	return min(hold, time.Duration(cfg.RequestTimeoutSeconds)*time.Second/2)
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
		ReceiveGrace:         receiveGrace(cfg),
		MaxEventStreams:      cfg.MaxEventStreams,
		EventStreamHeartbeat: time.Duration(cfg.EventStreamHeartbeatSeconds) * time.Second,
		MaxConnections:       cfg.MaxConnections,
		MaxWaitingReceives:   cfg.MaxWaitingReceives,
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
