package pull

import (
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Batch is a publish request's events for queue subscriptions, inside the
// budget but not yet queued. Exactly one of Commit and Abort must be
// called.
type Batch struct {
	s     *Store
	parts []part
}

type part struct {
	q       *queue
	name    string // the subscription's, for errors
	entries []*entry
	bytes   int64
}

// Prepare reserves budget for the events of deliveries that go to queue
// subscriptions. It is all or nothing: when a subscription's share or the
// broker's budget cannot hold them it returns EQueueFull and reserves
// nothing. Push subscriptions in deliveries are ignored. The events' bodies
// are kept; their Event structs are not.
func (s *Store) Prepare(topic eventgrid.Topic, deliveries []eventgrid.Delivery) (*Batch, error) {
	if err := s.precheck(deliveries); err != nil {
		return nil, err // before converting events that cannot be queued
	}
	b := &Batch{s: s}
	for _, d := range deliveries {
		var body []byte
		for _, sub := range d.Subscriptions {
			if !sub.IsQueue() {
				continue
			}
			s.mu.RLock()
			q := s.queues[sub.UID]
			s.mu.RUnlock()
			if q == nil {
				// Deleted since the request was routed, or the broker is
				// stopping.
				s.opts.Metrics.Dropped(sub, ReasonSubscriptionDeleted, 1)
				continue
			}
			if body == nil {
				body = d.Event.Body
				if s.opts.Transform != nil {
					body = s.opts.Transform(topic, sub, body)
				}
			}
			p := b.part(q, sub.Name)
			p.entries = append(p.entries, &entry{body: body, published: d.Event.Accepted, lockIdx: -1, delayIdx: -1, ttlIdx: -1})
			p.bytes += int64(len(body))
		}
	}
	for i := range b.parts {
		p := &b.parts[i]
		if m := s.opts.MaxBytesPerSubscription; m > 0 && p.bytes > m {
			b.undo(i)
			return nil, eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request queues %d bytes for event subscription %q, more than one subscription ever holds (broker__maxQueuedBytesPerSubscription %d); send fewer events per request.", p.bytes, p.name, m)
		}
		if !p.q.share.Reserve(len(p.entries), p.bytes) {
			b.undo(i)
			return nil, shareFull(p.name)
		}
		if !s.opts.Global.Reserve(len(p.entries), p.bytes) {
			p.q.share.Release(len(p.entries), p.bytes)
			b.undo(i)
			return nil, eventgrid.Errorf(eventgrid.EQueueFull, "The broker holds its limit of queued events while subscribers catch up; retry later.")
		}
	}
	return b, nil
}

// precheck refuses a publication that would not fit the event count of a
// subscription's share, without reserving anything: with EPayloadTooLarge
// when it never could, and EQueueFull when it cannot now.
func (s *Store) precheck(deliveries []eventgrid.Delivery) error {
	if s.opts.MaxEventsPerSubscription <= 0 {
		return nil
	}
	var counts map[*eventgrid.EventSubscription]int
	for _, d := range deliveries {
		for _, sub := range d.Subscriptions {
			if sub.IsQueue() {
				if counts == nil {
					counts = map[*eventgrid.EventSubscription]int{}
				}
				counts[sub]++
			}
		}
	}
	for sub, n := range counts {
		s.mu.RLock()
		q := s.queues[sub.UID]
		s.mu.RUnlock()
		if q == nil {
			continue
		}
		if n > s.opts.MaxEventsPerSubscription {
			return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request makes %d deliveries to event subscription %q, more than one subscription ever holds (broker__maxQueuedEventsPerSubscription %d); send fewer events per request.", n, sub.Name, s.opts.MaxEventsPerSubscription)
		}
		if used, _ := q.share.Used(); used+n > s.opts.MaxEventsPerSubscription {
			return shareFull(sub.Name)
		}
	}
	return nil
}

func shareFull(name string) error {
	return eventgrid.Errorf(eventgrid.EQueueFull, "Event subscription %q holds its share of queued events (broker__maxQueuedEventsPerSubscription, broker__maxQueuedBytesPerSubscription) until its receivers catch up; retry later.", name)
}

func (b *Batch) part(q *queue, name string) *part {
	for i := range b.parts {
		if b.parts[i].q == q {
			return &b.parts[i]
		}
	}
	b.parts = append(b.parts, part{q: q, name: name})
	return &b.parts[len(b.parts)-1]
}

// undo releases the budget of the first n parts.
func (b *Batch) undo(n int) {
	for _, p := range b.parts[:n] {
		p.q.release(len(p.entries), p.bytes)
	}
}

// Empty reports whether the batch holds no event.
func (b *Batch) Empty() bool { return len(b.parts) == 0 }

// Abort releases the batch's budget and queues nothing.
func (b *Batch) Abort() { b.undo(len(b.parts)) }

// Commit queues the batch's events, each at the back of its subscription's
// queue, and wakes the receives waiting there.
func (b *Batch) Commit() {
	for _, p := range b.parts {
		p.q.enqueue(p.entries, p.bytes)
	}
}

func (q *queue) enqueue(entries []*entry, bytes int64) {
	q.mu.Lock()
	if q.closed {
		sub := q.sub
		q.mu.Unlock()
		q.release(len(entries), bytes)
		q.s.opts.Metrics.Dropped(sub, ReasonSubscriptionDeleted, len(entries))
		return
	}
	ttl := q.s.scale(q.sub.Queue.EventTimeToLive)
	for _, e := range entries {
		e.expires = e.published.Add(ttl)
		q.pushBackLocked(e)
	}
	now := q.s.opts.Clock.Now()
	q.armLocked(now)
	q.wakeLocked()
	q.mu.Unlock()
}
