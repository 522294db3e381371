package main

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// newQueues builds the queue subscriptions' store, which reports through
// out. Its events count in the broker's budget, which the dispatcher
// claims for them.
func newQueues(cfg config.Config, out *outcome.Reporter, log zerolog.Logger) *queue.Store {
	return queue.New(queue.Options{
		MaxWaiting: cfg.MaxWaitingReceives,
		TimeScale:  float64(cfg.QueueTimeScale),
		Reporter:   out,
	}, log)
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

// deliveryLogs are the log switches of both delivery modes, from the same
// keys.
func deliveryLogs(cfg config.Config) eventgrid.DeliveryLogs {
	return eventgrid.DeliveryLogs{
		LogDeliverySuccess: cfg.LogDeliverySuccess,
		LogDeliveryFailure: cfg.LogDeliveryFailure,
		LogEventExpiry:     cfg.LogEventExpiry,
	}
}
