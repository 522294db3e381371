package registry

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// validateQueue checks a queue subscription. Queue subscriptions hand out
// CloudEvents 1.0: the delivery schema defaults to it, an EventGridSchema
// topic's events are converted, and a CustomEventSchema topic cannot have
// one. The event time to live is bounded by the retry policy's expiry
// limits, and defaults to the lesser of 7 days and the upper limit.
func (o Options) validateQueue(sub *eventgrid.EventSubscription, topic eventgrid.Topic) error {
	if topic.InputSchema == eventgrid.CustomEventSchema {
		return eventgrid.Errorf(eventgrid.EInvalidSchema, "properties.deliveryConfiguration.deliveryMode Queue hands out CloudEvents 1.0, which the events of topic %q (inputSchema %s) cannot be converted to.", topic.Name, topic.InputSchema)
	}
	if sub.EventDeliverySchema == "" {
		sub.EventDeliverySchema = eventgrid.CloudEventSchemaV1_0
	}
	if sub.EventDeliverySchema != eventgrid.CloudEventSchemaV1_0 {
		return eventgrid.Errorf(eventgrid.EInvalidSchema, "properties.eventDeliverySchema must be %s for a subscription whose deliveryMode is Queue; got %s.", eventgrid.CloudEventSchemaV1_0, sub.EventDeliverySchema)
	}
	q := *sub.Queue
	lo, hi := time.Duration(o.MinExpiryMinutes)*time.Minute, time.Duration(o.MaxExpiryMinutes)*time.Minute
	if q.EventTimeToLiveText == "" {
		q.EventTimeToLive = eventgrid.DefaultQueueEventTTL
		if hi > 0 {
			q.EventTimeToLive = min(q.EventTimeToLive, hi)
		}
	} else if q.EventTimeToLive < lo || (hi > 0 && q.EventTimeToLive > hi) {
		return eventgrid.Errorf(eventgrid.EInvalidDelivery, "properties.deliveryConfiguration.queue.eventTimeToLive must be between %d and %d minutes (api__retryPolicyLimits__minExpirationTimeInMinutes, …maxExpirationTimeInMinutes); got %s.", o.MinExpiryMinutes, o.MaxExpiryMinutes, q.EventTimeToLiveText)
	}
	if q.ReceiveLockSeconds < eventgrid.MinReceiveLockSeconds || q.ReceiveLockSeconds > eventgrid.MaxReceiveLockSeconds {
		return eventgrid.Errorf(eventgrid.EInvalidDelivery, "properties.deliveryConfiguration.queue.receiveLockDurationInSeconds must be between %d and %d; got %d.", eventgrid.MinReceiveLockSeconds, eventgrid.MaxReceiveLockSeconds, q.ReceiveLockSeconds)
	}
	if q.MaxDeliveryCount < eventgrid.MinQueueDeliveryCount || q.MaxDeliveryCount > eventgrid.MaxQueueDeliveryCount {
		return eventgrid.Errorf(eventgrid.EInvalidDelivery, "properties.deliveryConfiguration.queue.maxDeliveryCount must be between %d and %d; got %d.", eventgrid.MinQueueDeliveryCount, eventgrid.MaxQueueDeliveryCount, q.MaxDeliveryCount)
	}
	if sub.RetryPolicy != nil {
		return eventgrid.Errorf(eventgrid.EInvalidRetryPolicy, "properties.retryPolicy does not apply to a subscription whose deliveryMode is Queue; set deliveryConfiguration.queue.maxDeliveryCount and eventTimeToLive.")
	}
	sub.Queue = &q
	return nil
}
