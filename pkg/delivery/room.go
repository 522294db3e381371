package delivery

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Publishers wait briefly for room (docs/delivery.md#bounded-queues). A
// publish request that does not fit the budget now is held, for at most
// PublishHold, while what it waits for is draining: the subscriptions whose
// share is full, or the broker when its own budget is, have delivered
// within the last PublishHold. Each delivery that completes wakes the held
// requests, which try again. So under saturation a publisher waits for the
// room its events need, as it would behind a relay, instead of costing the
// broker a request, read and decoded, per refusal and retry; and a dead
// subscriber, which frees nothing, still gets the refusal at once.

// roomCheck is how often a held request looks for room besides the wake-ups
// of completed deliveries: room also comes back from deletes, events the
// retry policy drops and pull deliveries acknowledged.
const roomCheck = 20 * time.Millisecond

// room wakes the requests held for room.
type room struct {
	waiting atomic.Int32
	mu      sync.Mutex
	ch      chan struct{}
}

// wait returns a channel closed by the next notify. The caller counts
// itself in waiting first, so that notify does not skip it.
func (r *room) wait() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch == nil {
		r.ch = make(chan struct{})
	}
	return r.ch
}

// notify wakes the held requests, if any.
func (r *room) notify() {
	if r.waiting.Load() == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch != nil {
		close(r.ch)
		r.ch = nil
	}
}

// delivered notes that q delivered events at now, freeing budget.
func (q *queue) delivered(now int64) {
	now = max(now, 1) // 0 is never
	q.deliveredAt.Store(now)
	q.e.deliveredAt.Store(now)
	q.e.room.notify()
}

// hold waits for room after try refused a request with EQueueFull, and
// tries again, until try does not refuse, nothing the request waits for is
// draining, PublishHold has passed or ctx is done. blocked returns the
// queues whose share the request does not fit, none when the broker's own
// budget is what is full. It returns try's last error.
func (e *Engine) hold(ctx context.Context, err error, blocked func() []*queue, try func() error) error {
	if e.opts.PublishHold <= 0 || eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		return err
	}
	e.room.waiting.Add(1)
	defer e.room.waiting.Add(-1)
	deadline := time.Now().Add(e.opts.PublishHold)
	t := time.NewTimer(roomCheck)
	defer t.Stop()
	for {
		if !e.draining(blocked()) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return err
		}
		ch := e.room.wait()
		if err = try(); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
			return err
		}
		t.Reset(min(left, roomCheck))
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			return err
		}
	}
}

// draining reports whether the queues blocked, or the broker when there
// are none, delivered within the last PublishHold.
func (e *Engine) draining(blocked []*queue) bool {
	since := e.nanos(e.clock.Now()) - int64(e.opts.PublishHold)
	recent := func(at int64) bool { return at != 0 && at > since }
	if len(blocked) == 0 {
		return recent(e.deliveredAt.Load())
	}
	for _, q := range blocked {
		if !recent(q.deliveredAt.Load()) {
			return false
		}
	}
	return true
}

// full returns the queues of shares whose events do not fit their
// subscription's share now.
func (e *Engine) full(shares []share) []*queue {
	var out []*queue
	o := &e.opts
	for _, sh := range shares {
		if q := sh.q; q != nil && (q.events.Load()+sh.events > int64(o.MaxQueuedEventsPerSubscription) ||
			q.bytes.Load()+sh.bytes > o.MaxQueuedBytesPerSubscription) {
			out = append(out, q)
		}
	}
	return out
}

// AdmitWait is Admit that, when the broker's budget is full while it
// delivers, waits for room as a held publish request does, at most
// PublishHold or until ctx is done.
func (e *Engine) AdmitWait(ctx context.Context, bytes int64) bool {
	try := func() error {
		if e.Admit(bytes) {
			return nil
		}
		return eventgrid.Errorf(eventgrid.EQueueFull, "no room")
	}
	return e.hold(ctx, try(), func() []*queue { return nil }, try) == nil
}
