package main

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/bootstrap"
	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/edgehub"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// startDesiredConfig applies the declared topics and event subscriptions
// and keeps following their live sources until ctx is done: desired_config
// (applied once), desired_config_file (read again every
// desired_config_pollIntervalInSeconds) and the module twin's desired
// properties over edge's connection (see followTwin). A bad entry is logged
// and skipped; only an unreadable desired_config or desired_config_file at
// start stops the start. It returns the readiness check: false until each
// source has been applied once, and the function that stops the followers
// and waits for them, so that none changes the registry while the delivery
// modes close.
func startDesiredConfig(ctx context.Context, cfg config.Config, reg *registry.Registry, edge *edgehub.Client, log zerolog.Logger) (ready func() bool, stop func(context.Context) error, err error) {
	log = log.With().Str("component", "bootstrap").Logger()
	rec := bootstrap.NewReconciler(reg, reg, log)
	twin := edge != nil && followTwin(cfg)
	if twin {
		rec.Expect(bootstrap.SourceTwin)
	}
	doc, err := bootstrap.Load(cfg.DesiredConfig, cfg.DesiredConfigFile)
	if err != nil {
		return nil, nil, err
	}
	if doc != nil {
		source := bootstrap.SourceInline
		if cfg.DesiredConfigFile != "" {
			source = bootstrap.SourceFile
		}
		if _, err := rec.Apply(ctx, source, doc); err != nil {
			return nil, nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if cfg.DesiredConfigFile != "" {
		interval := time.Duration(cfg.DesiredConfigPollSeconds) * time.Second
		wg.Go(func() { rec.WatchFile(ctx, cfg.DesiredConfigFile, interval, doc, nil) })
	}
	if twin {
		log.Info().Msg("following the module twin's desired properties")
		wg.Go(func() { followTwinDesired(ctx, edge, rec) })
	}
	return rec.Ready, func(context.Context) error { cancel(); wg.Wait(); return nil }, nil
}

// followTwinDesired applies the module twin's desired properties until ctx
// is done.
func followTwinDesired(ctx context.Context, edge *edgehub.Client, rec *bootstrap.Reconciler) {
	edge.FollowTwin(ctx, edgehub.TwinOptions{
		Apply: func(ctx context.Context, desired []byte) map[string]any {
			res, err := rec.Apply(ctx, bootstrap.SourceTwin, desired)
			return rec.Reported(ctx, bootstrap.SourceTwin, res, err)
		},
		RequestTimeout: 10 * time.Second,
		Retry:          time.Second,
	})
}

// followTwin reports whether edgehub__twin asks for the module twin to be
// followed: under IoT Edge by default, with any edgeHub endpoint when
// enabled.
func followTwin(cfg config.Config) bool {
	switch cfg.EdgeHubTwin {
	case config.TwinEnabled:
		return edgeHubAvailable(cfg)
	case config.TwinDisabled:
		return false
	}
	return underIoTEdge(cfg)
}
