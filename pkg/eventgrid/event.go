package eventgrid

import (
	"context"
	"time"
)

// MaxEventSize is the largest single event the broker accepts, in bytes.
const MaxEventSize = 1 << 20

// Event is one accepted event, decoded and validated once at publish time.
// It is immutable once published and shared by every subscription it
// matched.
type Event struct {
	// ID is the event's id (empty for CustomEventSchema).
	ID string
	// Type is the EventGridSchema eventType or the CloudEvents type.
	Type string
	// Subject is the EventGridSchema or CloudEvents subject; HasSubject is
	// false when a CloudEvent has none.
	Subject    string
	HasSubject bool
	// DataVersion is the EventGridSchema dataVersion, sent as
	// aeg-data-version.
	DataVersion string
	// Body is the JSON object delivered to subscribers: the canonical form
	// for EventGridSchema (topic set, metadataVersion "1", camelCase) and
	// CloudEvents (lower-case attribute names), the bytes as received for
	// CustomEventSchema.
	Body []byte
	// Accepted is when the broker accepted the event; its time to live counts
	// from here.
	Accepted time.Time
}

// Delivery pairs an accepted event with the subscriptions it matched.
type Delivery struct {
	Event         *Event
	Subscriptions []*EventSubscription
}

// Publisher takes accepted events for delivery. The delivery engine
// implements it.
type Publisher interface {
	// Publish queues every event of the request for each subscription it
	// matched. It is all or nothing: when the broker cannot hold them all it
	// returns an *Error with code EQueueFull and queues nothing. It never
	// waits for delivery and is safe for concurrent use.
	Publish(ctx context.Context, topic Topic, deliveries []Delivery) error
}
