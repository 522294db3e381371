package eventgrid

// DeliveryLogs are the log switches both delivery modes obey, set from the
// same configuration keys (docs/metrics.md#logs): the one reporter of
// both modes (package outcome) applies them alike.
type DeliveryLogs struct {
	// LogDeliverySuccess (broker__logDeliverySuccess) logs every attempt
	// that delivered events: a push batch, queue events acknowledged.
	LogDeliverySuccess bool
	// LogDeliveryFailure (broker__logDeliveryFailure) logs every attempt
	// that failed: a push request, queue events released or whose locks
	// expired.
	LogDeliveryFailure bool
	// LogEventExpiry (broker__logEventExpiry) logs every event given up on,
	// dead-lettered or dropped, push or queue.
	LogEventExpiry bool
}
