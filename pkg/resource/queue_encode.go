package resource

import (
	"encoding/json"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// DeliveryConfiguration is the response shape of a queue subscription's
// deliveryConfiguration.
type DeliveryConfiguration struct {
	DeliveryMode eventgrid.DeliveryMode `json:"deliveryMode"`
	Queue        *QueueInfo             `json:"queue,omitempty"`
}

// QueueInfo is the response shape of deliveryConfiguration.queue. The
// dead-letter destination never carries the connection string, a secret.
type QueueInfo struct {
	ReceiveLockDurationInSeconds int                    `json:"receiveLockDurationInSeconds"`
	MaxDeliveryCount             int                    `json:"maxDeliveryCount"`
	EventTimeToLive              string                 `json:"eventTimeToLive,omitempty"`
	DeadLetterDestination        *DeadLetterDestination `json:"deadLetterDestination,omitempty"`
}

// QueueStatus counts the events a queue subscription holds: Available to
// receive now, Locked by a receiver, Delayed by a release.
type QueueStatus struct {
	Available int `json:"available"`
	Locked    int `json:"locked"`
	Delayed   int `json:"delayed"`
}

// MarshalJSON writes a queue subscription's counts when Queue is set, and
// the push counts otherwise.
func (d DeliveryStatus) MarshalJSON() ([]byte, error) {
	if d.Queue != nil {
		return json.Marshal(d.Queue)
	}
	type push DeliveryStatus
	return json.Marshal(push(d))
}

// newDeliveryConfiguration builds the response shape of a queue
// subscription's configuration.
func newDeliveryConfiguration(s *eventgrid.EventSubscription) *DeliveryConfiguration {
	q := s.Queue
	info := &QueueInfo{
		ReceiveLockDurationInSeconds: q.ReceiveLockSeconds,
		MaxDeliveryCount:             q.MaxDeliveryCount,
		EventTimeToLive:              q.EventTimeToLiveText,
	}
	if d := s.DeadLetter; d != nil {
		info.DeadLetterDestination = newDeadLetterDestination(d)
	}
	return &DeliveryConfiguration{DeliveryMode: eventgrid.DeliveryQueue, Queue: info}
}
