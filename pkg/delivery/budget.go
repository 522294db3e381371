package delivery

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// shared is one publish request's events, held by the queues of the
// subscriptions they matched. Its events were allocated together, so the
// request's whole size stays in the budget until its last delivery is done,
// and so do the converted copies of its events, which live as long. Queues
// keep only each event's body (and this), not its Event, so that the Event
// structs, needed only to route, are freed once the request is queued.
type shared struct {
	size     int64        // the request's bytes, converted copies included
	refs     atomic.Int64 // deliveries still queued or in flight
	accepted time.Time    // when the request was accepted; TTLs count from here
}

// share is one subscription's part of a publish request.
type share struct {
	sub    *eventgrid.EventSubscription
	q      *queue
	events int64
	bytes  int64
}

// conv is the body subscriptions of one delivery schema receive for the
// event at index ev of a request.
type conv struct {
	ev     int
	schema eventgrid.InputSchema
	body   []byte
}

// scratch holds one request's tallies while it is published.
type scratch struct {
	shares  []share
	convs   []conv
	deleted []*eventgrid.EventSubscription // one per delivery to a deleted subscription
}

// scratchPool holds the per-request tallies, one request's at a time.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Publish implements eventgrid.Publisher. A request that can never fit the
// budget gets EPayloadTooLarge; one that does not fit now is held for room
// while what it waits for drains (room.go), then gets EQueueFull, naming
// the subscription whose share is full when that is why. Every byte the
// request leaves queued counts: the published events, and each converted
// copy once, however many subscriptions share it.
func (e *Engine) Publish(ctx context.Context, p eventgrid.Publication) error {
	var pairs, bytes, copies int64
	var accepted time.Time
	sc := scratchPool.Get().(*scratch)
	defer func() {
		clear(sc.shares)
		clear(sc.convs)
		clear(sc.deleted)
		sc.shares, sc.convs, sc.deleted = sc.shares[:0], sc.convs[:0], sc.deleted[:0]
		scratchPool.Put(sc)
	}()
	for i, d := range p.Deliveries {
		pairs += int64(len(d.Subscriptions))
		bytes += int64(len(d.Event.Body))
		if accepted.IsZero() || d.Event.Accepted.Before(accepted) {
			accepted = d.Event.Accepted // the earliest, should they differ
		}
		from := len(sc.convs)
		for _, sub := range d.Subscriptions {
			body, fresh := e.bodyFor(sc, from, p.Topic, i, d.Event.Body, sub)
			if fresh {
				copies += int64(len(body))
			}
			sc.shares = tally(sc.shares, sub, int64(len(body)))
		}
	}
	if pairs == 0 {
		return nil
	}
	bytes = max(bytes, p.Size) + copies
	if err := e.neverFits(pairs, bytes, sc.shares); err != nil {
		e.metrics.Rejected(int(pairs))
		return err
	}
	err := e.enqueue(p, sc, pairs, bytes, accepted)
	if err != nil {
		err = e.hold(ctx, err, func() []*queue { return e.full(sc.shares) },
			func() error { return e.enqueue(p, sc, pairs, bytes, accepted) })
	}
	if err != nil {
		if eventgrid.ErrorCode(err) == eventgrid.EQueueFull {
			e.metrics.Rejected(int(pairs))
		}
		return err
	}
	for _, sub := range sc.deleted {
		e.metrics.Dropped(sub, DropDeleted, 1)
	}
	return nil
}

// enqueue reserves the request's budget and queues its deliveries. It
// collects in sc.deleted the subscriptions deleted since the request was
// matched, one entry per delivery, for the caller to count without the lock.
func (e *Engine) enqueue(p eventgrid.Publication, sc *scratch, pairs, bytes int64, accepted time.Time) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return eventgrid.Errorf(eventgrid.EUnavailable, "The broker is shutting down.")
	}
	shares := sc.shares
	for i := range shares {
		shares[i].q = e.queues[shares[i].sub.UID] // nil: deleted since the request was matched
	}
	if err := e.reserve(pairs, bytes, shares); err != nil {
		return err
	}
	s := &shared{size: bytes, accepted: accepted}
	s.refs.Store(pairs)
	from := 0
	for i, d := range p.Deliveries {
		for from < len(sc.convs) && sc.convs[from].ev < i {
			from++
		}
		for _, sub := range d.Subscriptions {
			q := e.queues[sub.UID]
			body, _ := e.bodyFor(sc, from, p.Topic, i, d.Event.Body, sub)
			if q == nil || !q.push(item{body: body, s: s}) {
				sc.deleted = append(sc.deleted, sub)
				e.release(s)
				if q != nil {
					q.unreserve(1, int64(len(body)))
				}
			}
		}
	}
	for i := range shares {
		if q := shares[i].q; q != nil {
			q.kick()
		}
	}
	return nil
}

// bodyFor returns the body sub receives for the event at index ev of a
// request, converting it once per delivery schema; sc.convs[from:] starts
// with the event's conversions so far. fresh reports a converted copy made
// by this call.
func (e *Engine) bodyFor(sc *scratch, from int, topic eventgrid.Topic, ev int, body []byte, sub *eventgrid.EventSubscription) (out []byte, fresh bool) {
	if e.opts.Transform == nil {
		return body, false
	}
	for i := from; i < len(sc.convs) && sc.convs[i].ev == ev; i++ {
		if c := &sc.convs[i]; c.schema == sub.EventDeliverySchema {
			return c.body, false
		}
	}
	out = e.opts.Transform(topic, sub, body)
	sc.convs = append(sc.convs, conv{ev: ev, schema: sub.EventDeliverySchema, body: out})
	return out, !sameBytes(out, body)
}

// sameBytes reports whether a and b are the same memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// tally adds one delivery of n bytes to sub's share of a request.
func tally(shares []share, sub *eventgrid.EventSubscription, n int64) []share {
	for i := range shares {
		if shares[i].sub == sub {
			shares[i].events++
			shares[i].bytes += n
			return shares
		}
	}
	return append(shares, share{sub: sub, events: 1, bytes: n})
}

// neverFits returns a permanent error for a request larger than the budget
// it would have to fit, however empty the queues.
func (e *Engine) neverFits(pairs, bytes int64, shares []share) error {
	o := &e.opts
	switch {
	case pairs > int64(o.MaxQueuedEvents):
		return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request makes %d deliveries, more than the broker ever queues (broker__maxQueuedEvents %d); send fewer events per request.", pairs, o.MaxQueuedEvents)
	case bytes > o.MaxQueuedBytes:
		return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request's events take %d bytes, more than the broker ever queues (broker__maxQueuedBytes %d); send fewer events per request.", bytes, o.MaxQueuedBytes)
	}
	for _, sh := range shares {
		switch {
		case sh.events > int64(o.MaxQueuedEventsPerSubscription):
			return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request makes %d deliveries to event subscription %s, more than one subscription ever queues (broker__maxQueuedEventsPerSubscription %d); send fewer events per request.", sh.events, sh.sub.Name, o.MaxQueuedEventsPerSubscription)
		case sh.bytes > o.MaxQueuedBytesPerSubscription:
			return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request queues %d bytes for event subscription %s, more than one subscription ever queues (broker__maxQueuedBytesPerSubscription %d); send fewer events per request.", sh.bytes, sh.sub.Name, o.MaxQueuedBytesPerSubscription)
		}
	}
	return nil
}

// reserve takes room for the request from each subscription's share and
// from the broker's budget, all or nothing.
func (e *Engine) reserve(pairs, bytes int64, shares []share) error {
	o := &e.opts
	for i, sh := range shares {
		if sh.q == nil {
			continue
		}
		if !sh.q.reserve(sh.events, sh.bytes) {
			for _, prev := range shares[:i] {
				if prev.q != nil {
					prev.q.unreserve(prev.events, prev.bytes)
				}
			}
			return eventgrid.Errorf(eventgrid.EQueueFull, "Event subscription %s holds its share of queued events (broker__maxQueuedEventsPerSubscription %d, broker__maxQueuedBytesPerSubscription %d) while its subscriber catches up; retry later.", sh.sub.Name, o.MaxQueuedEventsPerSubscription, o.MaxQueuedBytesPerSubscription)
		}
	}
	if !e.reserveGlobal(pairs, bytes) {
		for _, sh := range shares {
			if sh.q != nil {
				sh.q.unreserve(sh.events, sh.bytes)
			}
		}
		return eventgrid.Errorf(eventgrid.EQueueFull, "The broker holds its limit of queued events (broker__maxQueuedEvents %d, broker__maxQueuedBytes %d) while subscribers catch up; retry later.", o.MaxQueuedEvents, o.MaxQueuedBytes)
	}
	return nil
}

// Admit reports whether a request of about bytes bytes could be queued now,
// as far as the broker-wide budget tells. The publish path asks before
// reading a body, so that while the broker is full a request is refused
// without being read and decoded; Publish still makes the final decision.
func (e *Engine) Admit(bytes int64) bool {
	return e.queuedEvents.Load() < int64(e.opts.MaxQueuedEvents) && e.queuedBytes.Load()+bytes <= e.opts.MaxQueuedBytes
}

// ReserveGlobal takes room for events of bytes from the broker-wide budget
// (broker__maxQueuedEvents, broker__maxQueuedBytes) for events held outside
// the engine, such as those of queue subscriptions, so that push and pull
// share one limit. It reports false, taking nothing, when they do not fit.
// ReleaseGlobal gives the room back.
func (e *Engine) ReserveGlobal(events int, bytes int64) bool {
	return e.reserveGlobal(int64(events), bytes)
}

// ReleaseGlobal returns what ReserveGlobal took.
func (e *Engine) ReleaseGlobal(events int, bytes int64) {
	e.queuedBytes.Add(-bytes)
	e.queuedEvents.Add(-int64(events))
}

func (e *Engine) reserveGlobal(pairs, bytes int64) bool {
	if n := e.queuedEvents.Add(pairs); n > int64(e.opts.MaxQueuedEvents) {
		e.queuedEvents.Add(-pairs)
		return false
	}
	if n := e.queuedBytes.Add(bytes); n > e.opts.MaxQueuedBytes {
		e.queuedBytes.Add(-bytes)
		e.queuedEvents.Add(-pairs)
		return false
	}
	return true
}

// release returns one delivery of s to the broker's budget, and s's bytes
// with its last delivery.
func (e *Engine) release(s *shared) {
	e.queuedEvents.Add(-1)
	if s.refs.Add(-1) == 0 {
		e.queuedBytes.Add(-s.size)
	}
}

// reserve takes room for events of bytes from the subscription's share.
func (q *queue) reserve(events, bytes int64) bool {
	o := &q.e.opts
	if q.events.Add(events) > int64(o.MaxQueuedEventsPerSubscription) {
		q.events.Add(-events)
		return false
	}
	if q.bytes.Add(bytes) > o.MaxQueuedBytesPerSubscription {
		q.bytes.Add(-bytes)
		q.events.Add(-events)
		return false
	}
	return true
}

func (q *queue) unreserve(events, bytes int64) {
	q.events.Add(-events)
	q.bytes.Add(-bytes)
}

// releaseItem returns it to both budgets.
func (q *queue) releaseItem(it *item) {
	q.unreserve(1, int64(len(it.body)))
	q.e.release(it.s)
}
