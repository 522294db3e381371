// Package metrics measures the broker for its operators. Prometheus keeps
// the topic and subscription metrics of the original module
// (docs/design.md#metric-names, docs/metrics.md) and
// the broker's queue gauges in its own registry and serves them in the
// Prometheus text format; Console logs a compact summary of the same
// metrics at an interval, for troubleshooting without a collector.
//
// Each documented metric maps to one series family:
//
//	EventsReceived                eventgrid_topic_events_received_total{topic}
//	UnmatchedEvents               eventgrid_topic_unmatched_events_total{topic}
//	SuccessRequests               eventgrid_topic_success_requests_total{topic}
//	SystemErrorRequests           eventgrid_topic_system_error_requests_total{topic}
//	UserErrorRequests             eventgrid_topic_user_error_requests_total{topic}
//	SuccessRequestLatencyMs       eventgrid_topic_success_request_latency_ms{topic} (histogram)
//	DeliverySuccessCounts         eventgrid_subscription_delivery_success_total{topic,subscription}
//	DeliveryFailureCounts         eventgrid_subscription_delivery_failure_total{topic,subscription}
//	DeliverySuccessLatencyMs      eventgrid_subscription_delivery_success_latency_ms{topic,subscription} (histogram)
//	DeliveryFailureLatencyMs      eventgrid_subscription_delivery_failure_latency_ms{topic,subscription} (histogram)
//	SystemDelayForFirstAttemptMs  eventgrid_subscription_system_delay_for_first_attempt_ms{topic,subscription} (histogram)
//	DeliveryAttemptsCount         eventgrid_subscription_delivery_attempts_total{topic,subscription}
//	ExpiredCounts                 eventgrid_subscription_expired_total{topic,subscription}
//
// The broker adds eventgrid_events_dropped_total{topic,subscription,reason}
// and eventgrid_subscription_dead_lettered_total,
// eventgrid_publish_rejected_total{reason}, and gauges read from the delivery
// modes at every scrape: eventgrid_push_events{topic,subscription,state},
// eventgrid_backoff_queue_depth{queue}, eventgrid_deliveries_in_flight,
// eventgrid_queued_events, eventgrid_queued_bytes and the queue
// subscriptions' eventgrid_queue_events{state}. A queue subscription has
// the series a push subscription has wherever they mean the same: both
// modes' records (package outcome) move them (docs/metrics.md).
package metrics
