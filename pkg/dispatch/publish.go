package dispatch

import (
	"context"
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// conv is the body the subscriptions of one delivery schema receive for
// the event at index ev of a request.
type conv struct {
	ev     int
	schema eventgrid.InputSchema
	body   []byte
}

// scratch is one request's working memory while it is dispatched: each
// subscription's claim on the budget, the converted bodies, and the bodies
// grouped by subscription for the modes.
type scratch struct {
	claims []budget.Claim
	convs  []conv
	block  []byte   // converted copies are cut from its spare capacity
	bodies [][]byte // claim k's bodies are bodies[start[k]:start[k+1]]
	start  []int
	next   []int
}

// scratchPool holds the per-request scratch, one request's at a time.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (sc *scratch) release() {
	clear(sc.claims)
	clear(sc.convs)
	clear(sc.bodies)
	sc.claims, sc.convs, sc.bodies = sc.claims[:0], sc.convs[:0], sc.bodies[:0]
	sc.start, sc.next = sc.start[:0], sc.next[:0]
	sc.block = nil // its copies live on in the queues, not here
	scratchPool.Put(sc)
}

// Publish implements eventgrid.Publisher: it queues every delivery of p
// with the mode of its subscription, all or nothing. The broker's budget
// decides once for the whole request (see budget.Budget.Reserve): a request
// that can never fit gets EPayloadTooLarge and one that does not fit now
// EQueueFull, naming the subscription whose share is full when that is
// why, and either way nothing is queued. A request that does not fit now
// is first held for room, up to PublishHold and until ctx is done, while
// the subscriptions it waits for, push or queue, are taking deliveries.
// Every byte the request leaves queued counts: the published events, and
// each converted copy once, however many subscriptions, push or queue,
// share it.
func (d *Dispatcher) Publish(ctx context.Context, p eventgrid.Publication) error {
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	pairs, bytes, accepted := d.tally(sc, p)
	if pairs == 0 {
		return nil
	}
	for i := range sc.claims {
		c := &sc.claims[i]
		var err error
		// A nil share: the subscription was deleted since the request was
		// matched. An error: the broker is stopping.
		if c.Share, err = d.modeOf(c.Sub).Share(c.Sub); err != nil {
			return err
		}
	}
	h, err := d.opts.Budget.ReserveWithin(ctx, d.wait(), pairs, bytes, accepted, sc.claims)
	if err != nil {
		d.opts.Metrics.Rejected(eventgrid.RefusalReason(err))
		return err
	}
	d.group(sc, p)
	for k, c := range sc.claims {
		d.modeOf(c.Sub).Enqueue(c, sc.bodies[sc.start[k]:sc.start[k+1]], h)
	}
	return nil
}

// tally fills sc.claims with each subscription's deliveries and bytes, and
// converts the events subscriptions receive in another schema. It returns
// the request's deliveries, its bytes (p's size and the converted copies)
// and when it was accepted (the earliest, should its events differ).
func (d *Dispatcher) tally(sc *scratch, p eventgrid.Publication) (pairs, bytes int64, accepted time.Time) {
	var size, copies int64
	for i, dv := range p.Deliveries {
		pairs += int64(len(dv.Subscriptions))
		size += int64(len(dv.Event.Body))
		if accepted.IsZero() || dv.Event.Accepted.Before(accepted) {
			accepted = dv.Event.Accepted
		}
		from := len(sc.convs)
		for j, sub := range dv.Subscriptions {
			body, copied := d.bodyFor(sc, from, p, i, sub)
			copies += int64(copied)
			k := claimOf(sc.claims, j, sub)
			if k < 0 {
				k = len(sc.claims)
				sc.claims = append(sc.claims, budget.Claim{Sub: sub})
			}
			sc.claims[k].Events++
			sc.claims[k].Bytes += int64(len(body))
		}
	}
	return pairs, max(size, p.Size) + copies, accepted
}

// group lays the bodies of sc.claims out one subscription after the other,
// in the order of the request.
func (d *Dispatcher) group(sc *scratch, p eventgrid.Publication) {
	n := 0
	for _, c := range sc.claims {
		sc.start = append(sc.start, n)
		sc.next = append(sc.next, n)
		n += int(c.Events)
	}
	sc.start = append(sc.start, n)
	if cap(sc.bodies) < n {
		sc.bodies = make([][]byte, n)
	}
	sc.bodies = sc.bodies[:n]
	from := 0
	for i, dv := range p.Deliveries {
		for from < len(sc.convs) && sc.convs[from].ev < i {
			from++
		}
		for j, sub := range dv.Subscriptions {
			body, _ := d.bodyFor(sc, from, p, i, sub)
			k := claimOf(sc.claims, j, sub)
			sc.bodies[sc.next[k]] = body
			sc.next[k]++
		}
	}
}

// claimOf returns the index of sub's claim, -1 if it has none yet. The
// subscription at index j of a delivery usually has claim j (events that
// match every route share one list), which is tried first.
func claimOf(claims []budget.Claim, j int, sub *eventgrid.EventSubscription) int {
	if j < len(claims) && claims[j].Sub == sub {
		return j
	}
	for k := range claims {
		if claims[k].Sub == sub {
			return k
		}
	}
	return -1
}

// bodyFor returns the body sub receives for the event at index ev of p,
// converting it once per delivery schema; sc.convs[from:] starts with the
// event's conversions so far. copied is the bytes this call allocated for
// converted copies.
//
// The request's converted copies share blocks, as the decoder's bodies do:
// the first copy, made on its own, shows that the request converts, and
// the copies after it are cut from a block sized for the rest of the
// request's events. A block stays alive while any copy cut from it is
// queued; the budget counts the request's bytes, whole blocks included,
// until all of its events are gone, which matches.
func (d *Dispatcher) bodyFor(sc *scratch, from int, p eventgrid.Publication, ev int, sub *eventgrid.EventSubscription) (out []byte, copied int) {
	event := p.Deliveries[ev].Event
	if d.opts.Transform == nil {
		return event.Body, 0
	}
	for i := from; i < len(sc.convs) && sc.convs[i].ev == ev; i++ {
		if c := &sc.convs[i]; c.schema == sub.EventDeliverySchema {
			return c.body, 0
		}
	}
	dst := sc.block[len(sc.block):]
	out = d.opts.Transform(dst, p.Topic, sub, event)
	sc.convs = append(sc.convs, conv{ev: ev, schema: sub.EventDeliverySchema, body: out})
	if sameBytes(out, event.Body) {
		return out, 0
	}
	if cap(dst) > 0 && len(out) > 0 && &dst[:1][0] == &out[0] {
		sc.block = sc.block[:len(sc.block)+len(out)] // counted with the block
		return out, 0
	}
	copied = len(out)
	if sc.block == nil {
		sc.block = make([]byte, 0, roomAfter(p, ev, sub.EventDeliverySchema))
		copied += cap(sc.block)
	}
	return out, copied
}

// roomAfter is the room for the converted copies, in schema, of the events
// of p after index ev: their bodies and convertedGrowth each, for those with
// a subscription in that schema.
func roomAfter(p eventgrid.Publication, ev int, schema eventgrid.InputSchema) int {
	n := 0
	for _, dv := range p.Deliveries[ev+1:] {
		for _, sub := range dv.Subscriptions {
			if sub.EventDeliverySchema == schema {
				n += len(dv.Event.Body) + convertedGrowth
				break
			}
		}
	}
	return n
}

// convertedGrowth is how much larger than the published body a converted
// copy usually is: the CloudEvent of an EventGridSchema event adds its
// attributes' names and leaves metadataVersion out, under a hundred bytes.
// A copy that outgrows the room left is made on its own.
const convertedGrowth = 128

// sameBytes reports whether a and b are the same memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
