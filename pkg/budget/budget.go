// Package budget is the one account of what the broker holds in memory for
// delivery: the events waiting for their subscriptions, push and queue
// alike, and the bytes they keep alive. The publish path reserves a
// request's room with Reserve, which makes the one decision between
// accepted, "never fits" (EPayloadTooLarge: retrying cannot help) and
// "full" (EQueueFull: retry later), for every delivery mode; the delivery
// engines give the room back, one delivery at a time, through the request's
// Hold.
//
// Two things are counted. Events are (event, subscription) pairs: one per
// delivery still to be made. Bytes are what the requests occupy: a
// request's events are allocated together and stay in memory until the
// last of its deliveries is done, so a request's whole size (its converted
// copies included) is held until then. Each subscription also has a Share,
// the events and bytes of its own deliveries, bounded so that one dead
// subscriber refuses only the requests that would queue for it.
//
// A request that does not fit now may wait for room: ReserveWithin and
// AdmitWithin hold it briefly while what it waits for is draining, which
// the delivery engines tell by giving a delivery their subscriber took back
// with Hold.Delivered (see room.go).
//
// Every counter is an atomic: Reserve and Release take no lock, and are
// safe for concurrent use.
package budget

import (
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Limits bound what the broker holds. Zero values take DefaultLimits; the
// per-subscription bounds are at most the broker-wide ones.
type Limits struct {
	// Events bounds the deliveries held broker-wide (broker__maxQueuedEvents)
	// and Bytes the bytes of the requests they belong to
	// (broker__maxQueuedBytes).
	Events int64
	Bytes  int64
	// EventsPerSubscription and BytesPerSubscription bound one
	// subscription's share (broker__maxQueuedEventsPerSubscription,
	// broker__maxQueuedBytesPerSubscription).
	EventsPerSubscription int64
	BytesPerSubscription  int64
}

// DefaultLimits returns the documented defaults.
func DefaultLimits() Limits {
	return Limits{Events: 100000, Bytes: 256 << 20, EventsPerSubscription: 25000, BytesPerSubscription: 64 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Events <= 0 {
		l.Events = d.Events
	}
	if l.Bytes <= 0 {
		l.Bytes = d.Bytes
	}
	if l.EventsPerSubscription <= 0 {
		l.EventsPerSubscription = min(d.EventsPerSubscription, l.Events)
	}
	if l.BytesPerSubscription <= 0 {
		l.BytesPerSubscription = min(d.BytesPerSubscription, l.Bytes)
	}
	return l
}

// Budget is the broker's budget. Create it with New.
type Budget struct {
	limits Limits
	events atomic.Int64
	bytes  atomic.Int64
	// drained is when the broker last had a delivery taken, in ns since
	// the Unix epoch (0: never), and room wakes the requests held for
	// room (room.go).
	drained atomic.Int64
	room    room
}

// New returns an empty budget bounded by l.
func New(l Limits) *Budget { return &Budget{limits: l.withDefaults()} }

// Limits returns the budget's bounds, defaults applied.
func (b *Budget) Limits() Limits { return b.limits }

// Used returns the deliveries and bytes held now.
func (b *Budget) Used() (events, bytes int64) { return b.events.Load(), b.bytes.Load() }

// Admit reports whether a request of about bytes bytes could be held now,
// as far as the broker-wide counters tell. The publish path asks before it
// reads a body, so that while the broker is full a request is refused
// without being read and decoded; Reserve still makes the decision.
func (b *Budget) Admit(bytes int64) bool {
	return b.events.Load() < b.limits.Events && b.bytes.Load()+bytes <= b.limits.Bytes
}

// Share is one subscription's part of the budget: the events and bytes of
// its deliveries held now. The zero value is an empty share; a delivery
// engine keeps one per subscription.
type Share struct {
	events atomic.Int64
	bytes  atomic.Int64
	// drained is when the subscriber last took a delivery, in ns since
	// the Unix epoch (0: never), and queued counts the requests held for
	// room that claim part of the share (room.go).
	drained atomic.Int64
	queued  atomic.Int32
}

// Used returns the deliveries and bytes held in the share now.
func (s *Share) Used() (events, bytes int64) { return s.events.Load(), s.bytes.Load() }

func (s *Share) take(events, bytes int64, l *Limits) bool {
	if s.events.Add(events) > l.EventsPerSubscription {
		s.events.Add(-events)
		return false
	}
	if s.bytes.Add(bytes) > l.BytesPerSubscription {
		s.bytes.Add(-bytes)
		s.events.Add(-events)
		return false
	}
	return true
}

func (s *Share) give(events, bytes int64) {
	s.events.Add(-events)
	s.bytes.Add(-bytes)
}

// Claim is what a request asks of one subscription: Events deliveries of
// Bytes bytes (the bodies the subscription receives) from Share. A nil
// Share is a subscription deleted since the request was matched: its
// deliveries count broker-wide until the engine that would have queued them
// releases them.
type Claim struct {
	Sub    *eventgrid.EventSubscription
	Share  *Share
	Events int64
	Bytes  int64
}

// Hold is one request's room in the budget: a delivery's event until it is
// done, and the request's bytes until its last delivery is done.
type Hold struct {
	b    *Budget
	size int64
	refs atomic.Int64
	// Accepted is when the broker accepted the request; its events' times
	// to live count from here.
	Accepted time.Time
}

// Release gives back one delivery of the hold, whose body of bytes bytes
// counted in share (nil: none), and the request's bytes with its last
// delivery. Each delivery is released exactly once.
func (h *Hold) Release(share *Share, bytes int64) {
	if share != nil {
		share.give(1, bytes)
	}
	h.b.events.Add(-1)
	if h.refs.Add(-1) == 0 {
		h.b.bytes.Add(-h.size)
	}
}
