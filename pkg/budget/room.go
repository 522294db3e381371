package budget

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Publishers wait briefly for room (docs/delivery.md#bounded-queues). A
// request that does not fit now is held, for at most Wait.Hold, while what
// it waits for is draining: the subscriptions whose share it does not fit,
// or the broker when its own bounds are what is full, had a delivery taken
// by their subscriber within the last Wait.Hold (Hold.Delivered: a push
// delivery done, a queue event acknowledged). A delivery taken that leaves
// a part of the bounds free gives the room to the held requests, oldest
// first. So under saturation a publisher waits for the room its events
// need, as it would behind a relay, instead of costing the broker a
// request, read and decoded, per refusal and retry; and a dead subscriber,
// which takes nothing, still gets its refusal at once.
//
// Room goes to the held requests in the order they came, for each share,
// so that no request is refused after its hold while younger ones for the
// same subscription are accepted, as one that raced the others for each
// room could be. A request that arrives while others are held for a share
// it claims queues behind them; one held for a share does not hold up
// requests for other shares.

// Wait says how a request that does not fit now waits for room.
type Wait struct {
	// Hold is the longest a request is held for room
	// (broker__publishHoldInMilliseconds); zero or less refuses at once.
	Hold time.Duration
	// Clock is the clock of the delivery modes, whose times of deliveries
	// taken the wait compares with its own; nil means clock.System.
	Clock clock.Clock
}

// recheck is how often the held requests look for room besides the
// deliveries taken: room also comes back from deletes, events dropped by
// their retry policy, rejected or dead-lettered.
const recheck = 20 * time.Millisecond

// room is the queue of the requests held for room.
type room struct {
	waiting atomic.Int32
	mu      sync.Mutex
	queue   []*waiter
	// walked is when a recheck last offered the queue room, in ns on the
	// clock of the waits (0: never): a held request's recheck offers it
	// only when no other has for a recheck's time.
	walked atomic.Int64
}

// waiter is one request held for room.
type waiter struct {
	// fits tries to take the request's room and reports whether it is
	// done waiting; it runs with the room locked.
	fits   func() bool
	claims []Claim
	// admit marks a request that asks whether it may be read (AdmitWithin)
	// and takes nothing: it neither waits its turn nor holds up others.
	admit bool
	done  chan struct{} // closed when fits said yes
}

// queuedOn returns the index of the first of claims whose share has
// requests held for it, or -1: a request that arrives then waits its turn
// behind them.
func queuedOn(claims []Claim) int {
	return slices.IndexFunc(claims, func(c Claim) bool { return c.Share != nil && c.Share.queued.Load() > 0 })
}

// enqueue adds w to the back of the queue and offers the queue room.
func (b *Budget) enqueue(w *waiter) {
	b.room.mu.Lock()
	defer b.room.mu.Unlock()
	b.room.waiting.Add(1)
	b.room.queue = append(b.room.queue, w)
	for _, c := range w.claims {
		if c.Share != nil {
			c.Share.queued.Add(1)
		}
	}
	b.offer()
}

// leave takes w, which has given up waiting, out of the queue. It reports
// whether w got its room after all, between giving up and leaving.
func (b *Budget) leave(w *waiter) bool {
	b.room.mu.Lock()
	defer b.room.mu.Unlock()
	select {
	case <-w.done:
		return true
	default:
	}
	for i, q := range b.room.queue {
		if q == w {
			b.room.queue = slices.Delete(b.room.queue, i, i+1)
			b.dequeued(w)
			break
		}
	}
	return false
}

// dequeued counts w out of the queue; the room is locked.
func (b *Budget) dequeued(w *waiter) {
	b.room.waiting.Add(-1)
	for _, c := range w.claims {
		if c.Share != nil {
			c.Share.queued.Add(-1)
		}
	}
}

// notify offers the held requests room, if any are held.
func (b *Budget) notify() {
	if b.room.waiting.Load() == 0 {
		return
	}
	b.room.mu.Lock()
	defer b.room.mu.Unlock()
	b.offer()
}

// offer gives room to the held requests that fit, oldest first; the room
// is locked. A request that does not fit holds up the younger ones that
// claim part of a share it waits for, or, when the broker's own bounds are
// what it waits for, every younger one: each bound's room goes to the
// requests in the order they came.
func (b *Budget) offer() {
	var short []*Share
	brokerShort := false
	kept := b.room.queue[:0]
	for _, w := range b.room.queue {
		if w.admit || !(brokerShort || claimsAny(w.claims, short)) {
			if w.fits() {
				// Counted out before it is woken: once woken, its
				// request may return and its claims be reused.
				b.dequeued(w)
				close(w.done)
				continue
			}
			if !w.admit {
				n := len(short)
				short = b.shortOf(short, w.claims)
				brokerShort = brokerShort || len(short) == n
			}
		}
		kept = append(kept, w)
	}
	clear(b.room.queue[len(kept):])
	b.room.queue = kept
}

// claimsAny reports whether claims take part of one of shares.
func claimsAny(claims []Claim, shares []*Share) bool {
	for _, c := range claims {
		if c.Share != nil && slices.Contains(shares, c.Share) {
			return true
		}
	}
	return false
}

// shortOf appends to short the shares that claims do not fit now.
func (b *Budget) shortOf(short []*Share, claims []Claim) []*Share {
	l := &b.limits
	for _, c := range claims {
		if c.Share == nil {
			continue
		}
		events, bytes := c.Share.Used()
		if events+c.Events > l.EventsPerSubscription || bytes+c.Bytes > l.BytesPerSubscription {
			short = append(short, c.Share)
		}
	}
	return short
}

// Delivered is Release for a delivery its subscriber took at now: a push
// delivery done, or a queue event acknowledged. The room it makes is what
// requests held for room wait for (see Budget.ReserveWithin): it wakes
// them, and tells them that the share, and the broker, are draining.
func (h *Hold) Delivered(share *Share, bytes int64, now time.Time) {
	h.Release(share, bytes)
	at := max(now.UnixNano(), 1) // 0 is never
	if share != nil {
		share.drained.Store(at)
	}
	h.b.drained.Store(at)
	if h.b.roomAfter(share) {
		h.b.notify()
	}
}

// roomAfter reports whether, after a delivery taken from share (nil:
// none), a part of the share's bounds and of the broker's is free
// (wakeMargin): whether offering the held requests room is worth it.
// Deliveries are given back one at a time, an acknowledge of a hundred
// events in a quick loop; a held request of a hundred events offered room
// after each one was tried in vain up to a hundred times. A held request a
// delivery does not offer room to is offered it by a later one, once the
// margin is free, or by a recheck.
func (b *Budget) roomAfter(share *Share) bool {
	l := &b.limits
	if share != nil && (l.EventsPerSubscription-share.events.Load() < wakeMargin(l.EventsPerSubscription) ||
		l.BytesPerSubscription-share.bytes.Load() < wakeMargin(l.BytesPerSubscription)) {
		return false
	}
	return l.Events-b.events.Load() >= wakeMargin(l.Events) && l.Bytes-b.bytes.Load() >= wakeMargin(l.Bytes)
}

// wakeMargin is the free part of a bound of limit that wakes the requests
// held for room: 1/64 of it (390 events of the default 25,000 a
// subscription), and at least 1, so that small bounds wake on every
// delivery.
func wakeMargin(limit int64) int64 { return max(limit/64, 1) }

// Waiting returns how many requests are held for room now.
func (b *Budget) Waiting() int { return int(b.room.waiting.Load()) }

// ReserveWithin is Reserve that holds a request which does not fit now
// for room, at most w.Hold and until ctx is done, while the subscriptions
// whose share it does not fit, or the broker when its own bounds are what
// is full, have had a delivery taken within the last w.Hold; it tries
// again whenever one is, after the requests held before it. A request that
// arrives while others are held for a share it claims is held behind them
// even if it fits now. A request that can never fit, or waits for a
// subscriber that takes nothing (dead, or failing every attempt), gets its
// error at once; one held in vain gets Reserve's EQueueFull.
func (b *Budget) ReserveWithin(ctx context.Context, w Wait, events, bytes int64, accepted time.Time, claims []Claim) (*Hold, error) {
	if w.Hold <= 0 || queuedOn(claims) < 0 {
		h, err := b.Reserve(events, bytes, accepted, claims)
		if eventgrid.ErrorCode(err) != eventgrid.EQueueFull || w.Hold <= 0 {
			return h, err
		}
	} else if err := b.neverFits(events, bytes, claims); err != nil {
		return nil, err
	}
	var h *Hold
	err := b.heldFull(claims) // unless it gets a try in its turn
	draining := func(since int64) bool { return b.draining(since, claims) }
	b.hold(ctx, w, draining, &waiter{claims: claims, fits: func() bool {
		h, err = b.Reserve(events, bytes, accepted, claims)
		return eventgrid.ErrorCode(err) != eventgrid.EQueueFull
	}})
	return h, err
}

// heldFull is the EQueueFull of a request refused before it had a try in
// its turn: it names a share it claims that others are held for, or, when
// none is, the broker.
func (b *Budget) heldFull(claims []Claim) error {
	if i := queuedOn(claims); i >= 0 {
		return b.shareFull(claims[i])
	}
	return b.brokerFull()
}

// AdmitWithin tells, before a request's body of bytes bytes is read,
// whether the broker could hold it: nil when it could now, or once it got
// room. While the broker's bounds are full it waits for room as
// ReserveWithin does, while the broker has had a delivery taken within the
// last w.Hold; one held in vain gets EQueueFull. A body larger than
// broker__maxQueuedBytes can never be held, however empty the broker
// (its bytes count whole, and its converted copies besides): it gets
// EPayloadTooLarge at once. Both errors are *eventgrid.Refusal.
func (b *Budget) AdmitWithin(ctx context.Context, w Wait, bytes int64) error {
	if bytes > b.limits.Bytes {
		return eventgrid.Refuse(eventgrid.RefusedTooLarge, eventgrid.EPayloadTooLarge, "The request body of %d bytes is more than the broker ever queues (broker__maxQueuedBytes %d); send fewer events per request.", bytes, b.limits.Bytes)
	}
	if b.Admit(bytes) {
		return nil
	}
	if w.Hold > 0 {
		draining := func(since int64) bool { return b.drained.Load() > since }
		if b.hold(ctx, w, draining, &waiter{admit: true, fits: func() bool { return b.Admit(bytes) }}) {
			return nil
		}
	}
	return b.brokerFull()
}

// hold queues q for room and waits until it gets it, while draining says
// that what the request waits for had a delivery taken since a time (ns
// since the Unix epoch), for at most w.Hold and until ctx is done. It
// reports whether q got its room.
func (b *Budget) hold(ctx context.Context, w Wait, draining func(since int64) bool, q *waiter) bool {
	c := w.Clock
	if c == nil {
		c = clock.System{}
	}
	q.done = make(chan struct{})
	b.enqueue(q)
	deadline := c.Now().Add(w.Hold)
	r := rechecker{clock: c, C: make(chan struct{}, 1)}
	defer r.stop()
	for {
		now := c.Now()
		left := deadline.Sub(now)
		if left <= 0 || !draining(now.UnixNano()-int64(w.Hold)) {
			return b.leave(q)
		}
		r.arm(min(left, recheck))
		select {
		case <-q.done:
			return true
		case <-r.C:
			// Each held request's recheck would offer the queue room; one
			// offer a recheck's time is enough for all of them.
			now := c.Now().UnixNano()
			if last := b.room.walked.Load(); now-last >= int64(recheck) && b.room.walked.CompareAndSwap(last, now) {
				b.notify()
			}
		case <-ctx.Done():
			return b.leave(q)
		}
	}
}

// rechecker ticks on C once after each arm; a tick not taken yet is not
// doubled. It keeps one timer for all of a request's hold.
type rechecker struct {
	clock clock.Clock
	t     clock.Timer
	C     chan struct{}
}

func (r *rechecker) arm(d time.Duration) {
	if r.t == nil {
		r.t = r.clock.AfterFunc(d, r.tick)
		return
	}
	r.t.Reset(d)
}

func (r *rechecker) tick() {
	select {
	case r.C <- struct{}{}:
	default:
	}
}

func (r *rechecker) stop() {
	if r.t != nil {
		r.t.Stop()
	}
}

// draining reports whether what a request of claims waits for had a
// delivery taken after since: every subscription whose share it does not
// fit, or, when it fits them all, the broker.
func (b *Budget) draining(since int64, claims []Claim) bool {
	l := &b.limits
	shareFull := false
	for _, c := range claims {
		if c.Share == nil {
			continue
		}
		events, bytes := c.Share.Used()
		if events+c.Events <= l.EventsPerSubscription && bytes+c.Bytes <= l.BytesPerSubscription {
			continue
		}
		if c.Share.drained.Load() <= since {
			return false
		}
		shareFull = true
	}
	return shareFull || b.drained.Load() > since
}
