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
	// Plain reports that the decoder built this EventGridSchema Body with
	// every string member printable ASCII without escapes, so that each
	// member's literal is its value in quotes: a conversion then finds the
	// members by their lengths instead of scanning for them. (Like DataAt,
	// it sits in HasSubject's padding.)
	Plain bool
	// Converted reports that Body is not the EventGridSchema body of the
	// event published but its CloudEvent, as the schema conversion writes
	// it (docs/design.md#schema-conversion): the decoder builds that
	// instead when every subscription of the topic takes CloudEvents, and
	// the event is then never converted (should a subscription that needs
	// it as published come meanwhile, the publish path restores it). ID,
	// Type, Subject and DataVersion keep the EventGridSchema members'
	// values; DataAt and Plain are zero.
	Converted bool
	// DataAt is where the value of data starts in an EventGridSchema Body
	// the decoder built, so that a conversion need not scan the data it
	// copies; it is 0 when that Body has no data or Body was built
	// elsewhere. (Kept beside HasSubject, it takes no room of its own.)
	DataAt int32
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

// Publication is what one publish request hands to the Publisher.
type Publication struct {
	Topic Topic
	// Deliveries pairs each accepted event that matched a subscription with
	// the subscriptions it matched.
	Deliveries []Delivery
	// Size is the memory the request's events occupy. They are allocated
	// together, matched or not, and freed together, so the publisher counts
	// all of it until the request's last delivery is done. Zero means the
	// sum of the delivered events' bodies.
	Size int64
}

// Subscribers is what the subscriptions of a topic ask of the publish
// path, as they are when it starts reading a request.
type Subscribers struct {
	// Any reports that the topic has subscriptions: a topic without any
	// queues nothing, so it is never refused for a full broker.
	Any bool
	// CloudEventsOnly reports that the topic is of EventGridSchema and that
	// every subscription takes its events as CloudEvents, with no filter
	// that reads an event's body: the events may be built as their
	// CloudEvents (see Event.Converted).
	CloudEventsOnly bool
}

// Publisher takes accepted events for delivery. The dispatcher (package
// dispatch) implements it over both delivery modes.
type Publisher interface {
	// Publish queues every event of the request for each subscription it
	// matched. It is all or nothing: when the broker cannot hold them all
	// now it returns an *Error with code EQueueFull, and EPayloadTooLarge
	// when it never could, and queues nothing. It never
	// waits for delivery and is safe for concurrent use. It may keep the
	// events' bodies but not the Event structs, nor p's slices: the caller
	// reuses them for its next request.
	Publish(ctx context.Context, p Publication) error
}
