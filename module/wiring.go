package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// observers tells several observers about every subscription change, in
// order.
type observers []eventgrid.SubscriptionObserver

func (o observers) SubscriptionPut(sub *eventgrid.EventSubscription) {
	for _, x := range o {
		x.SubscriptionPut(sub)
	}
}

func (o observers) SubscriptionDeleted(sub *eventgrid.EventSubscription) {
	for _, x := range o {
		x.SubscriptionDeleted(sub)
	}
}

// TopicCreated implements eventgrid.TopicObserver, for the observers that
// are one.
func (o observers) TopicCreated(t eventgrid.Topic) {
	for _, x := range o {
		if to, ok := x.(eventgrid.TopicObserver); ok {
			to.TopicCreated(t)
		}
	}
}

// TopicDeleted implements eventgrid.TopicObserver, for the observers that
// are one.
func (o observers) TopicDeleted(t eventgrid.Topic) {
	for _, x := range o {
		if to, ok := x.(eventgrid.TopicObserver); ok {
			to.TopicDeleted(t)
		}
	}
}

// CheckSubscriptionPut implements eventgrid.SubscriptionGuard: the change
// is refused when any of the observers refuses it.
func (o observers) CheckSubscriptionPut(old, sub *eventgrid.EventSubscription) error {
	for _, x := range o {
		if g, ok := x.(eventgrid.SubscriptionGuard); ok {
			if err := g.CheckSubscriptionPut(old, sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// lateReconciler tells the declared configuration's reconciler, once it
// is set, of deleted topics and event subscriptions: an entry that waits
// for the REST API to delete a name is applied again when it does. Until
// it is set there is nothing to tell, since no listener is open.
type lateReconciler struct {
	atomic.Pointer[desired.Reconciler]
}

func (l *lateReconciler) SubscriptionPut(*eventgrid.EventSubscription) {}

func (l *lateReconciler) SubscriptionDeleted(s *eventgrid.EventSubscription) {
	if r := l.Load(); r != nil {
		r.SubscriptionDeleted(s)
	}
}

func (l *lateReconciler) TopicCreated(eventgrid.Topic) {}

func (l *lateReconciler) TopicDeleted(t eventgrid.Topic) {
	if r := l.Load(); r != nil {
		r.TopicDeleted(t)
	}
}

// reporter is what metrics__reporterType selects: Prometheus (served at
// /metrics) or Console (logged periodically); both measure the same things.
type reporter interface {
	api.Metrics
	outcome.Metrics
	dispatch.Metrics
	eventgrid.SubscriptionObserver
	Collect(func() push.Stats)
	CollectHeld(func() dispatch.Holdings)
	CollectQueues(func() []queue.SubscriptionCounts)
}

// newReporter returns the configured reporter, its /metrics handler (nil
// unless Prometheus) and its Close (which logs a last summary for
// Console). It returns a nil reporter for "none".
func newReporter(ctx context.Context, cfg config.Config, log zerolog.Logger) (reporter, *metrics.Prometheus, func(context.Context) error) {
	nothing := func(context.Context) error { return nil }
	switch cfg.MetricsReporterType {
	case config.ReporterPrometheus:
		p := metrics.NewPrometheus()
		return p, p, nothing
	case config.ReporterConsole:
		c := metrics.NewConsole(time.Duration(cfg.MetricsReportingIntervalSeconds)*time.Second, log)
		if err := c.Run(ctx); err != nil {
			log.Warn().Err(err).Msg("console metrics reporter did not start")
		}
		return c, nil, c.Close
	}
	return nil, nil, nothing
}

// newBoard makes the inspection board (docs/console.md): the totals,
// history, given-up lists and live streams of every topic and
// subscription, which the delivery modes report to. Its history samples
// what each subscription holds through the dispatcher, which startModes
// makes next: startBoard starts the sampling once it is there.
func (b *broker) newBoard(cfg config.Config) {
	b.board = inspect.New(inspect.Options{
		MaxFailures:     cfg.MaxFailuresPerSubscription,
		MaxFailureBytes: cfg.MaxFailureBytesPerSubscription,
	})
}

// startBoard starts the board's sampling of what the dispatcher holds,
// adding it to lc.
func (b *broker) startBoard(lc *lifecycle) {
	b.board.Start(b.dispatcher.HeldEvents)
	lc.add("inspect", func(context.Context) error { return b.board.Close() })
}
