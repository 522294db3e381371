package eventgrid

// DeliveryLogs are the log switches both delivery modes obey, set from the
// same configuration keys (docs/metrics.md#logs, docs/pull-delivery.md).
// The push engine and the queue store embed them in their options.
type DeliveryLogs struct {
	// LogDeliverySuccess (broker__logDeliverySuccess) logs every delivered
	// push batch and every acknowledgement of queue events.
	LogDeliverySuccess bool
	// LogDeliveryFailure (broker__logDeliveryFailure) logs every failed push
	// attempt, and a queue's rejections, expired locks, dead letters and
	// drops.
	LogDeliveryFailure bool
	// LogEventExpiry (broker__logEventExpiry) logs every event a push
	// subscription's retry policy gives up on, and every queue event past
	// its time to live.
	LogEventExpiry bool
}
