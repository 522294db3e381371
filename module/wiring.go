package main

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/delivery"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/metrics"
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

// reporter is what metrics__reporterType selects: Prometheus (served at
// /metrics) or Console (logged periodically); both measure the same things.
type reporter interface {
	api.Metrics
	delivery.Metrics
	dispatch.Metrics
	eventgrid.SubscriptionObserver
	Collect(func() delivery.Stats)
	CollectHeld(func() dispatch.Holdings)
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
