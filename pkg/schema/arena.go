package schema

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// arena hands out the memory of one request's events: their bodies are cut
// from shared blocks, so that a batch of a hundred events costs a handful of
// allocations instead of a hundred, with no per-event rounding up to an
// allocation size class, and their Event structs come from a Scratch. What
// is cut from one block stays alive while any of it is referenced; the
// delivery engine accounts for a request's bytes until all of its events
// are gone, which matches.
type arena struct {
	block   []byte // the current block; bodies are cut from its spare capacity
	next    int    // size of the next block
	scratch *Scratch
}

// newArena returns an arena whose first block has room for size bytes,
// taking Event structs from s, which it readies for events of them.
func newArena(size, events int, s *Scratch) *arena {
	s.reset(max(events, 1))
	return &arena{next: max(size, 512), scratch: s}
}

// body returns an empty slice with capacity n, cut from the current block
// or from a new one. Callers append at most n bytes to it.
func (a *arena) body(n int) []byte {
	if cap(a.block)-len(a.block) < n {
		size := max(n, a.next)
		a.block = make([]byte, 0, size)
		a.next = max(size/4, 4096) // later blocks only hold what the estimate missed
	}
	start := len(a.block)
	a.block = a.block[:start+n]
	return a.block[start : start : start+n]
}

// event returns a zeroed Event.
func (a *arena) event() *eventgrid.Event { return a.scratch.event() }

// Scratch is memory for the Event structs of one request at a time, reused
// from one request to the next. A publish path that hands events on by
// their bodies, as the delivery engine keeps them, then allocates no Event
// structs per request. Events decoded with a Scratch are valid until its
// next decode or Reset; their bodies stay valid for good. The zero value is
// ready to use; a Scratch is not safe for concurrent use.
type Scratch struct {
	// ToCloudEvents asks for the events of an EventGridSchema request to
	// be built as their CloudEvents, each marked eventgrid.Event.Converted,
	// for a topic whose every subscription takes CloudEvents: the event is
	// then written once, instead of once as published and once more when
	// it is converted. An event whose members the conversion would have to
	// rewrite (escapes, characters outside printable ASCII) is built as
	// usual. The other schemas do not change.
	ToCloudEvents bool
	// FoldExtensionNames asks for the CloudEvents extension attributes of a
	// CloudEventSchemaV1_0 request to be read as the original module read
	// every member, ignoring case, and delivered with the lower-case names
	// CloudEvents 1.0 gives attributes: its documented example's
	// "dataVersion" becomes the extension "dataversion". Without it a name
	// with an upper-case letter is refused.
	FoldExtensionNames bool

	events []eventgrid.Event
	ptrs   []*eventgrid.Event
}

// Reset forgets the last request's events, so that they pin no memory.
func (s *Scratch) Reset() { s.reset(0) }

// reset clears the events and makes room for n more without moving them.
func (s *Scratch) reset(n int) {
	clear(s.events)
	clear(s.ptrs)
	s.events, s.ptrs = s.events[:0], s.ptrs[:0]
	if cap(s.events) < n {
		s.events = make([]eventgrid.Event, 0, n)
	}
}

// event returns a zeroed Event from the reserved room, or a new one should
// the reservation fall short (Events already handed out must not move).
func (s *Scratch) event() *eventgrid.Event {
	if len(s.events) == cap(s.events) {
		return new(eventgrid.Event)
	}
	s.events = s.events[:len(s.events)+1]
	return &s.events[len(s.events)-1]
}

// DecodeBatch is the package's DecodeBatch with the Event structs taken
// from s.
func (s *Scratch) DecodeBatch(schema eventgrid.InputSchema, topic string, body []byte, accepted time.Time) ([]*eventgrid.Event, error) {
	return decodeBatch(s, schema, topic, body, accepted)
}

// DecodeOne is the package's DecodeOne with the Event struct taken from s.
func (s *Scratch) DecodeOne(schema eventgrid.InputSchema, topic string, body []byte, defaultID string, accepted time.Time) (*eventgrid.Event, error) {
	return decodeOne(s, schema, topic, body, defaultID, accepted)
}
