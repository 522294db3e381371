package main

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/delivery"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/pull"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// newQueues builds the queue subscriptions' store. Each queue subscription
// gets the per-subscription share of the queue budget; the broker-wide
// limits are charged through brokerBudget.
func newQueues(cfg config.Config, engine *delivery.Engine, dl eventgrid.DeadLetterer, prom *metrics.Prometheus, log zerolog.Logger) (*pull.Store, *metrics.Pull) {
	o := pull.Options{
		MaxEventsPerSubscription: cfg.MaxQueuedEventsPerSubscription,
		MaxBytesPerSubscription:  cfg.MaxQueuedBytesPerSubscription,
		MaxWaiting:               cfg.MaxWaitingReceives,
		Global:                   brokerBudget{engine},
		TimeScale:                float64(cfg.QueueTimeScale),
		Transform:                convertSchema,
		DeadLetterer:             dl,
		LogDeliverySuccess:       cfg.LogDeliverySuccess,
		LogDeliveryFailure:       cfg.LogDeliveryFailure,
		LogEventExpiry:           cfg.LogEventExpiry,
	}
	var m *metrics.Pull
	if prom != nil {
		m = prom.Pull()
		o.Metrics = m
	}
	s := pull.New(o, log)
	if m != nil {
		m.Collect(s.Stats)
	}
	return s, m
}

// receiveGrace is how long receive answers being written get to finish at
// the stop: a short grace, never more than broker__stopTimeoutInSeconds.
func receiveGrace(cfg config.Config) time.Duration {
	stop := time.Duration(cfg.StopTimeoutSeconds) * time.Second
	if stop <= 0 {
		return -1 // cut at once
	}
	return min(api.DefaultReceiveGrace, stop)
}

// brokerBudget charges queued pull events against the broker-wide limits
// (broker__maxQueuedEvents, broker__maxQueuedBytes) that the push engine
// keeps, so that push and pull subscriptions share one budget.
type brokerBudget struct{ engine *delivery.Engine }

func (b brokerBudget) Reserve(events int, bytes int64) bool {
	return b.engine.ReserveGlobal(events, bytes)
}

func (b brokerBudget) Release(events int, bytes int64) { b.engine.ReleaseGlobal(events, bytes) }

// withQueueStatus reports a queue subscription's counts in deliveryStatus,
// and asks push for the others.
func withQueueStatus(s *pull.Store, push func(*eventgrid.EventSubscription) *resource.DeliveryStatus) func(*eventgrid.EventSubscription) *resource.DeliveryStatus {
	return func(sub *eventgrid.EventSubscription) *resource.DeliveryStatus {
		if !sub.IsQueue() {
			return push(sub)
		}
		c, ok := s.Counts(sub)
		if !ok {
			return nil
		}
		return &resource.DeliveryStatus{Queue: &resource.QueueStatus{Available: c.Available, Locked: c.Locked, Delayed: c.Delayed}}
	}
}
