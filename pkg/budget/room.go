package budget

import (
	"context"
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
// a part of the bounds free wakes the held requests, which try again. So
// under saturation a publisher waits for the room its events need, as it
// would behind a relay, instead of costing the broker a request, read and
// decoded, per refusal and retry; and a dead subscriber, which takes
// nothing, still gets its refusal at once.

// Wait says how a request that does not fit now waits for room.
type Wait struct {
	// Hold is the longest a request is held for room
	// (broker__publishHoldInMilliseconds); zero or less refuses at once.
	Hold time.Duration
	// Clock is the clock of the delivery modes, whose times of deliveries
	// taken the wait compares with its own; nil means clock.System.
	Clock clock.Clock
}

// recheck is how often a held request looks for room besides the wake-ups
// of deliveries taken: room also comes back from deletes, events dropped
// by their retry policy, rejected or dead-lettered.
const recheck = 20 * time.Millisecond

// room wakes the requests held for room.
type room struct {
	waiting atomic.Int32
	ch      atomic.Pointer[chan struct{}]
}

// wait returns a channel closed by the next notify. The caller counts
// itself in waiting first, so that notify does not skip it, and tries for
// room after wait, so that no notify falls between its try and its wait.
func (r *room) wait() <-chan struct{} {
	for {
		if p := r.ch.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if r.ch.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// notify wakes the held requests, if any.
func (r *room) notify() {
	if r.waiting.Load() == 0 {
		return
	}
	if p := r.ch.Swap(nil); p != nil {
		close(*p)
	}
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
		h.b.room.notify()
	}
}

// roomAfter reports whether, after a delivery taken from share (nil:
// none), a part of the share's bounds and of the broker's is free
// (wakeMargin): whether waking the held requests is worth it. Deliveries
// are given back one at a time, an acknowledge of a hundred events in a
// quick loop; a held request of a hundred events woken after each one
// tried again in vain up to a hundred times, each time a goroutine woken
// and parked again. A held request a delivery does not wake is woken by a
// later one, once the margin is free, or by its recheck.
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
// again whenever one is. A request that can never fit, or waits for a
// subscriber that takes nothing (dead, or failing every attempt), gets its
// error at once; one held in vain gets Reserve's EQueueFull.
func (b *Budget) ReserveWithin(ctx context.Context, w Wait, events, bytes int64, accepted time.Time, claims []Claim) (*Hold, error) {
	h, err := b.Reserve(events, bytes, accepted, claims)
	if eventgrid.ErrorCode(err) != eventgrid.EQueueFull || w.Hold <= 0 {
		return h, err
	}
	draining := func(since int64) bool { return b.draining(since, claims) }
	b.hold(ctx, w, draining, func() bool {
		h, err = b.Reserve(events, bytes, accepted, claims)
		return eventgrid.ErrorCode(err) != eventgrid.EQueueFull
	})
	return h, err
}

// AdmitWithin is Admit that, while the broker's bounds are full, waits for
// room as ReserveWithin does, while the broker has had a delivery taken
// within the last w.Hold.
func (b *Budget) AdmitWithin(ctx context.Context, w Wait, bytes int64) bool {
	if b.Admit(bytes) {
		return true
	}
	if w.Hold <= 0 {
		return false
	}
	draining := func(since int64) bool { return b.drained.Load() > since }
	return b.hold(ctx, w, draining, func() bool { return b.Admit(bytes) })
}

// hold waits for fits to say yes, trying again on each delivery taken and
// every recheck, while draining says that what the request waits for had
// a delivery taken since a time (ns since the Unix epoch), for at most
// w.Hold and until ctx is done. It reports whether fits said yes.
func (b *Budget) hold(ctx context.Context, w Wait, draining func(since int64) bool, fits func() bool) bool {
	c := w.Clock
	if c == nil {
		c = clock.System{}
	}
	b.room.waiting.Add(1)
	defer b.room.waiting.Add(-1)
	deadline := c.Now().Add(w.Hold)
	r := rechecker{clock: c, C: make(chan struct{}, 1)}
	defer r.stop()
	for {
		now := c.Now()
		left := deadline.Sub(now)
		if left <= 0 || !draining(now.UnixNano()-int64(w.Hold)) {
			return false
		}
		woken := b.room.wait()
		if fits() {
			return true
		}
		r.arm(min(left, recheck))
		select {
		case <-woken:
		case <-r.C:
		case <-ctx.Done():
			return false
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
