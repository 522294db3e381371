package push

import "sync/atomic"

// Stalled requests (docs/delivery.md#how-concurrency-adapts). A request is
// stalled once it has been in flight longer than stallAfter, four times
// its subscription's usual answer time. While the endpoint keeps answering
// other requests, a stalled request stops counting against the
// subscription's concurrency: an endpoint that lets a few requests hang
// keeps serving the others at the full rate. At most MaxPerSubscription
// requests of a subscription are stalled at once: when one more stalls,
// the one in flight longest is cancelled, fails as timed out and is
// retried by its policy. (Waiting past the bound for a second, say,
// before cancelling, makes the stalled requests beyond it count against
// the concurrency meanwhile, and an endpoint that lets 7 % of its requests
// hang was then served at a fraction of its rate.)
//
// An endpoint that has answered no request sent after its latest stalled
// one may hang altogether (hung): its stalled requests keep counting, and
// the subscription waits in the slow line. It sends one request at once, a
// probe: its answer tells whether the endpoint hangs or only the stalled
// requests did. Without the probe, an endpoint that leaves a few requests
// unanswered looked hung whenever they filled the subscription's limit at
// once, so that nothing was sent after them, and the subscription then
// waited for their timeouts. Once the probe has stalled too, the
// subscription sends one more request when all its stalled requests but
// one have ended. So an endpoint that hangs holds at most two requests
// sent after it was found hung, besides those in flight when it was.
//
// Stalling is the subscription's concern; being suspect (sched.go) is the
// pool's: a request past suspectAfter, up to a second, leaves its worker's
// slot to a new worker, whatever its subscription's state.

// stallAfter returns how long a request of q may be in flight before it is
// stalled: four times the usual answer time, and at least SuspectAfter/100
// (10 ms by default). Unlike suspectAfter it has no upper bound: an
// endpoint that always takes two seconds keeps all its requests counted.
func (q *queue) stallAfter() int64 {
	return max(int64(q.e.opts.SuspectAfter)/100, 4*q.usual.Load())
}

// hung reports whether q has a stalled request and its endpoint has
// answered no request sent after the latest stalled one. Answers to
// requests sent before it do not tell: when the broker, or the machine, is
// slow for a moment, all requests are late, and the answers that come are
// those of the oldest.
func (q *queue) hung() bool {
	return q.stalled.Load() > 0 && q.answered.Load() <= q.stallStart.Load()
}

// mayStartLocked reports whether q may start another request now.
func (q *queue) mayStartLocked() bool {
	n, s := q.inflight, int(q.stalled.Load())
	if s == 0 {
		return n < q.ctl.limit
	}
	if q.hung() {
		// One more once all but one have ended, and a probe as soon as
		// the endpoint looks hung: requests that stalled together, held
		// back by the limit, look hung until one sent after them is
		// answered.
		return n-min(s, 1) < 1 || (n == s && q.stallStart.Load() < q.hungAt.Load())
	}
	return n-s < q.ctl.limit
}

// stall marks w's request stalled if it is past its subscription's
// stallAfter, and then cancels the subscription's longest stalled request
// when more than MaxPerSubscription are. It appends to more the queue of a
// request it marked: it may send another request. Called with
// Engine.sched held.
func (e *Engine) stall(w *worker, now int64, more []*queue) []*queue {
	q := w.q
	if q == nil || now-w.start.Load() <= q.stallAfter() {
		return more
	}
	if _, ok := w.flag(stalled); !ok {
		return more
	}
	wasHung := q.hung()
	storeMax(&q.stallStart, w.start.Load())
	n := q.stalled.Add(1)
	if !wasHung && q.hung() { // found hung by this request's stall
		q.hungAt.Store(now)
	}
	if int(n) > e.opts.MaxPerSubscription {
		e.cutLongest(q)
	}
	return append(more, q)
}

// cutLongest cancels q's stalled request that has been in flight longest.
// Called with Engine.sched held.
func (e *Engine) cutLongest(q *queue) {
	var oldest *worker
	for _, list := range [2][]*worker{e.slots, e.parkedW} {
		for _, w := range list {
			if w.q == q && w.state.Load()&(stalled|aborted|cut) == stalled &&
				(oldest == nil || w.start.Load() < oldest.start.Load()) {
				oldest = w
			}
		}
	}
	if oldest != nil {
		e.cancelLocked(oldest, cut)
	}
}

// storeMax raises v to x unless it is already higher.
func storeMax(v *atomic.Int64, x int64) {
	for {
		old := v.Load()
		if old >= x || v.CompareAndSwap(old, x) {
			return
		}
	}
}
