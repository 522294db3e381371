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

// QueueStatus is a queue subscription's deliveryStatus: its state, the
// events it holds (Available to receive now, Locked by a receiver, Delayed
// by a release), the receives waiting for events now, its totals, when
// the earliest delayed event becomes available, when the broker accepted
// the oldest held, when the last receive came and since when it is paused.
type QueueStatus struct {
	State            string `json:"state"`
	Available        int    `json:"available"`
	Locked           int    `json:"locked"`
	Delayed          int    `json:"delayed"`
	ReceiversWaiting int    `json:"receiversWaiting"`
	DeliveryTotals
	NextAttemptTime  string `json:"nextAttemptTime,omitempty"`
	OldestQueuedTime string `json:"oldestQueuedTime,omitempty"`
	LastReceiveTime  string `json:"lastReceiveTime,omitempty"`
	PausedSince      string `json:"pausedSince,omitempty"`
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
