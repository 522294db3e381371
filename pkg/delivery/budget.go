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
// request's whole size stays in the budget until its last delivery is done.
// Queues keep only each event's body (and this), not its Event, so that the
// Event structs, needed only to route, are freed once the request is queued.
type shared struct {
	size     int64
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

// sharesPool holds the per-request tallies, one request's at a time.
var sharesPool = sync.Pool{New: func() any { return new([]share) }}

// Publish implements eventgrid.Publisher. A request that can never fit the
// budget gets EPayloadTooLarge; one that does not fit now gets EQueueFull,
// naming the subscription whose share is full when that is why.
func (e *Engine) Publish(_ context.Context, p eventgrid.Publication) error {
	var pairs, bytes int64
	var accepted time.Time
	sp := sharesPool.Get().(*[]share)
	shares := (*sp)[:0]
	defer func() {
		clear(shares)
		*sp = shares[:0]
		sharesPool.Put(sp)
	}()
	for _, d := range p.Deliveries {
		pairs += int64(len(d.Subscriptions))
		bytes += int64(len(d.Event.Body))
		if accepted.IsZero() || d.Event.Accepted.Before(accepted) {
			accepted = d.Event.Accepted // the earliest, should they differ
		}
		for _, sub := range d.Subscriptions {
			shares = tally(shares, sub, int64(len(d.Event.Body)))
		}
	}
	if pairs == 0 {
		return nil
	}
	bytes = max(bytes, p.Size)
	if err := e.neverFits(pairs, bytes, shares); err != nil {
		e.metrics.Rejected(int(pairs))
		return err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return eventgrid.Errorf(eventgrid.EUnavailable, "The broker is shutting down.")
	}
	for i := range shares {
		shares[i].q = e.queues[shares[i].sub.UID] // nil: deleted since the request was matched
	}
	if err := e.reserve(pairs, bytes, shares); err != nil {
		e.metrics.Rejected(int(pairs))
		return err
	}
	s := &shared{size: bytes, accepted: accepted}
	s.refs.Store(pairs)
	for _, d := range p.Deliveries {
		for _, sub := range d.Subscriptions {
			q := e.queues[sub.UID]
			body := d.Event.Body
			if q != nil && e.opts.Transform != nil {
				body = e.opts.Transform(p.Topic, sub, body)
			}
			if q == nil || !q.push(item{body: body, s: s}, len(d.Event.Body)) {
				e.metrics.Dropped(sub, DropDeleted, 1)
				e.release(s)
				if q != nil {
					q.unreserve(1, int64(len(d.Event.Body)))
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
// without being read and decoded; Publish still makes the binding decision.
func (e *Engine) Admit(bytes int64) bool {
	return e.queuedEvents.Load() < int64(e.opts.MaxQueuedEvents) && e.queuedBytes.Load()+bytes <= e.opts.MaxQueuedBytes
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

// push adds a freshly published event, reserved as reserved bytes, without
