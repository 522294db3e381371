package eventgrid

import "time"

// DeliveryMode says how a subscription hands out its events.
type DeliveryMode string

// The delivery modes.
const (
	// DeliveryPush sends events to the subscription's destination.
	DeliveryPush DeliveryMode = "Push"
	// DeliveryQueue keeps events until an application receives them and
	// settles them (acknowledge, release, reject); see docs/pull-delivery.md.
	DeliveryQueue DeliveryMode = "Queue"
)

// The bounds and defaults of a queue subscription, as Azure Event Grid
// namespaces define them.
const (
	MinReceiveLockSeconds     = 60
	MaxReceiveLockSeconds     = 300
	DefaultReceiveLockSeconds = 60
	MinQueueDeliveryCount     = 1
	MaxQueueDeliveryCount     = 100
	DefaultQueueDeliveryCount = 10
	// DefaultQueueEventTTL is the default and, on Azure, the maximum time an
	// event waits in a queue subscription.
	DefaultQueueEventTTL = 7 * 24 * time.Hour
)

// QueueConfig is a queue subscription's deliveryConfiguration.queue. A
// subscription with a QueueConfig has no Destination.
type QueueConfig struct {
	// ReceiveLockSeconds is how long a received event stays locked.
	ReceiveLockSeconds int
	// MaxDeliveryCount is how many times an event is handed out before it
	// is dead-lettered or dropped.
	MaxDeliveryCount int
	// EventTimeToLive is how long an event waits before it is dead-lettered
	// or dropped; EventTimeToLiveText is the ISO 8601 duration as given
	// (empty when the client gave none).
	EventTimeToLive     time.Duration
	EventTimeToLiveText string
}

// IsQueue reports whether sub is a queue (pull) subscription.
func (sub *EventSubscription) IsQueue() bool { return sub != nil && sub.Queue != nil }

// EndpointTypeName is how logs and reports name what sub delivers to: its
// destination's endpoint type, or Queue for a queue subscription, which has
// no destination.
func (sub *EventSubscription) EndpointTypeName() string {
	if sub.IsQueue() {
		return string(DeliveryQueue)
	}
	return string(sub.Destination.EndpointType)
}
