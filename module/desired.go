package main

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/desired"
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
// source has been applied once.
func startDesiredConfig(ctx context.Context, cfg config.Config, reg *registry.Registry, edge *edgehub.Client, log zerolog.Logger) (func() bool, error) {
	log = log.With().Str("component", "desired").Logger()
	rec := desired.NewReconciler(reg, log, desired.Options{})
	twin := edge != nil && followTwin(cfg)
	if twin {
		rec.Expect(desired.Twin)
	}
	doc, err := desired.Load(cfg.DesiredConfig, cfg.DesiredConfigFile)
	if err != nil {
		return nil, err
	}
	if doc != nil {
		owner := desired.Inline
		if cfg.DesiredConfigFile != "" {
			owner = desired.File(cfg.DesiredConfigFile)
		}
		if _, err := rec.Apply(ctx, owner, doc); err != nil {
			return nil, err
		}
	}
	switch {
	case cfg.DesiredConfigFile != "":
		interval := time.Duration(cfg.DesiredConfigPollSeconds) * time.Second
		go rec.WatchFile(ctx, cfg.DesiredConfigFile, interval, doc, nil)
	case doc != nil:
		go rec.Follow(ctx, desired.Inline, doc, nil)
	}
	if twin {
		log.Info().Msg("following the module twin's desired properties")
		go edge.FollowTwin(ctx, edgehub.TwinOptions{
			Apply: func(ctx context.Context, doc []byte) map[string]any {
				res, err := rec.Apply(ctx, desired.Twin, doc)
				return rec.Reported(desired.Twin, res, err)
			},
			RequestTimeout: 10 * time.Second,
			Retry:          time.Second,
		})
	}
	return rec.Ready, nil
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
