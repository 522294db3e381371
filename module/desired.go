package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/edgehub"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// declared follows the sources of declared configuration: desired_config
// (applied once, and again while entries fail for a passing reason),
// desired_config_file (read again every
// desired_config_pollIntervalInSeconds) and the module twin's desired
// properties over edge's connection (see followTwin).
type declared struct {
	rec  *desired.Reconciler
	cfg  config.Config
	reg  *registry.Registry
	edge *edgehub.Client
	log  zerolog.Logger

	doc    []byte // desired_config or desired_config_file's content at start
	twin   bool
	wg     sync.WaitGroup
	cancel context.CancelFunc // ends the followers; set by follow

	mu     sync.Mutex
	warned []string // queue subscriptions warned about (broker__replicas)
}

// newDeclared reads desired_config or desired_config_file and checks that
// it is a declaration, so that a broker whose declaration cannot be read
// or parsed does not start; it applies nothing yet. Ready (rec.Ready) is
// false until each source has been applied once.
func newDeclared(cfg config.Config, reg *registry.Registry, edge *edgehub.Client, log zerolog.Logger) (*declared, error) {
	log = log.With().Str("component", "desired").Logger()
	d := &declared{cfg: cfg, reg: reg, edge: edge, log: log, twin: edge != nil && followTwin(cfg)}
	d.rec = desired.NewReconciler(reg, log, desired.Options{
		RetryMax: time.Duration(cfg.DesiredConfigMaxRetrySeconds) * time.Second,
	})
	doc, err := desired.Load(cfg.DesiredConfig, cfg.DesiredConfigFile)
	if err != nil {
		return nil, err
	}
	if doc != nil {
		if err := desired.Check(doc); err != nil {
			if cfg.DesiredConfigFile != "" {
				return nil, fmt.Errorf("desired_config_file %s: %w", cfg.DesiredConfigFile, err)
			}
			return nil, fmt.Errorf("desired_config: %w", err)
		}
		d.rec.Expect(d.owner())
	}
	if d.twin {
		d.rec.Expect(desired.Twin)
	}
	d.doc = doc
	return d, nil
}

func (d *declared) owner() eventgrid.Owner {
	if d.cfg.DesiredConfigFile != "" {
		return desired.File(d.cfg.DesiredConfigFile)
	}
	return desired.Inline
}

// follow starts following every source until ctx is done or close is
// called, first applies included: they run in the background, so that a
// declared subscription's validation handshake never holds the listeners
// closed.
func (d *declared) follow(ctx context.Context) {
	ctx, d.cancel = context.WithCancel(ctx)
	switch {
	case d.cfg.DesiredConfigFile != "":
		interval := time.Duration(d.cfg.DesiredConfigPollSeconds) * time.Second
		d.wg.Go(func() { d.rec.WatchFile(ctx, d.cfg.DesiredConfigFile, interval, d.doc, d.applied) })
	case d.doc != nil:
		d.wg.Go(func() { d.rec.Follow(ctx, desired.Inline, d.doc, d.applied) })
	}
	if d.twin {
		d.log.Info().Msg("following the module twin's desired properties")
		d.wg.Go(func() {
			d.edge.FollowTwin(ctx, edgehub.TwinOptions{
				Apply: func(ctx context.Context, doc []byte) map[string]any {
					res, err := d.rec.Apply(ctx, desired.Twin, doc)
					d.applied(res, err)
					return d.rec.Reported(desired.Twin, res, err)
				},
				RequestTimeout: 10 * time.Second,
				Retry:          time.Second,
				Reapply:        d.rec.Retries(desired.Twin),
			})
		})
	}
}

// close stops the followers and returns once every one has returned, so
// that none is changing the registry while the delivery modes close. It
// always returns nil.
func (d *declared) close(context.Context) error {
	if d.cancel != nil {
		d.cancel()
	}
	d.wg.Wait()
	return nil
}

// applied warns, when the broker runs as one of several replicas
// (broker__replicas), about queue subscriptions it has not warned about
// yet: each replica holds its own queue, so an event published through the
// Service to one pod can be received only from that pod.
func (d *declared) applied(desired.Result, error) {
	if d.cfg.Replicas <= 1 {
		return
	}
	var queues []string
	topics, _ := d.reg.Topics(context.Background())
	for _, t := range topics {
		subs, _ := d.reg.Subscriptions(context.Background(), t.Name)
		for _, s := range subs {
			if s.IsQueue() {
				queues = append(queues, s.Topic+"/"+s.Name)
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var fresh []string
	for _, q := range queues {
		if !slices.Contains(d.warned, q) {
			fresh = append(fresh, q)
		}
	}
	if len(fresh) == 0 {
		return
	}
	d.warned = append(d.warned, fresh...)
	d.log.Warn().Int("replicas", d.cfg.Replicas).Str("queueSubscriptions", strings.Join(fresh, ", ")).
		Msg("this broker is one of several replicas and holds queue subscriptions: each replica keeps its own queue, so an event published through the Service to one pod can be received only from that pod, and a lock taken on one pod is unknown to the others; run one replica, or one broker per queue consumer group (docs/kubernetes.md)")
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

// readyDetail is what /readyz adds about the declared configuration: each
// source's status, with the entries it skipped and when it retries them;
// nil when there is no source.
func readyDetail(st []desired.SourceStatus) any {
	if len(st) == 0 {
		return nil
	}
	return st
}

// Ready implements api.Readiness: each source has been applied once.
func (d *declared) Ready() bool { return d.rec.Ready() }

// ReadyDetail implements api.Readiness: the sources' status.
func (d *declared) ReadyDetail() any { return readyDetail(d.rec.Status()) }
