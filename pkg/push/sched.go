package push

import (
	"sync"
	"sync/atomic"
	"time"
)

// worker is one delivery goroutine. While it holds a slot of the pool it
// serves queues; the watchdog parks it when its request turns suspect, and
// hands its slot to a new worker: a parked worker finishes its request and
// exits.
type worker struct {
	slot int
	b    taken // reused for every batch this worker sends
	// q is the queue being served; slow says that the request counts
	// against Engine.slowMax; parked that the worker left its slot. All
	// three are guarded by Engine.sched.
	q      *queue
	slow   bool
	parked bool
	// start is when the request began, in ns since Engine.epoch, and state
	// the request's flags below: the worker sets them without a lock, to
	// flying and back to zero, and the watchdog adds the others. cancel
	// cancels the request: the worker sets it before the state flying, and
	// the watchdog calls it under Engine.sched, which the worker takes (in
	// next) before it starts another request. pidx is its index in
	// Engine.parkedW while parked.
	start  atomic.Int64
	state  atomic.Int32
	cancel func()
	pidx   int
	// wake is signalled when the worker is taken from Engine.idle; its
	// lock is Engine.sched.
	wake sync.Cond
}

// The flags of a worker's request; idle is none.
const (
	flying  int32 = 1 << iota // in flight
	suspect                   // past suspectAfter: parked, or counted in the slow share
	stalled                   // past stallAfter (stall.go)
	aborted                   // cancelled: no room to park it
	cut                       // cancelled: its subscription had too many stalled
	idle    int32 = 0
)

// flag adds f to the flags of w's request, unless the request has ended,
// was cancelled or has f already; it reports whether it did. Only the
// watchdog adds flags, under Engine.sched, so the request can only end
// meanwhile.
func (w *worker) flag(f int32) (was int32, ok bool) {
	s := w.state.Load()
	if s&flying == 0 || s&(f|aborted|cut) != 0 || !w.state.CompareAndSwap(s, s|f) {
		return s, false
	}
	return s, true
}

// startWorkerLocked starts a worker in slot. Called with Engine.sched held.
func (e *Engine) startWorkerLocked(slot int) {
	w := &worker{slot: slot}
	w.wake.L = &e.sched
	e.slots[slot] = w
	e.wg.Add(1)
	go e.work(w)
}

// schedule puts q in line for a worker, unless it is already. Called with
// q.mu held.
func (e *Engine) schedule(q *queue, slow bool) {
	if q.scheduled.Load() {
		// A worker will take it and see what the caller changed under q.mu,
		// which it locks after clearing the flag.
		return
	}
	e.sched.Lock()
	defer e.sched.Unlock()
	if q.scheduled.Load() || e.stopping {
		return
	}
	q.scheduled.Store(true)
	if slow {
		e.slowq.push(q)
	} else {
		e.runq.push(q)
	}
	e.wakeLocked()
}

// wakeLocked wakes the worker that went idle last, if any is idle. Called
// with Engine.sched held.
func (e *Engine) wakeLocked() {
	n := len(e.idle)
	if n == 0 {
		return // every worker is busy, and looks for work when it is done
	}
	w := e.idle[n-1]
	e.idle[n-1] = nil
	e.idle = e.idle[:n-1]
	w.wake.Signal()
}

// wakeAllLocked wakes every idle worker. Called with Engine.sched held.
func (e *Engine) wakeAllLocked() {
	for len(e.idle) > 0 {
		e.wakeLocked()
	}
}

// next ends w's previous turn and waits for work: a queue to serve or a
// discard to report. It returns false when w is to exit: the engine stops,
// or w was parked.
func (e *Engine) next(w *worker) (q *queue, d *discard, ok bool) {
	e.sched.Lock()
	defer e.sched.Unlock()
	w.q = nil
	if w.slow {
		w.slow = false
		e.slowBusy--
	}
	if w.parked {
		last := e.parkedW[len(e.parkedW)-1]
		last.pidx = w.pidx
		e.parkedW[w.pidx] = last
		e.parkedW[len(e.parkedW)-1] = nil
		e.parkedW = e.parkedW[:len(e.parkedW)-1]
		return nil, nil, false
	}
	for {
		if e.stopping {
			return nil, nil, false
		}
		if n := len(e.discards); n > 0 {
			d = e.discards[n-1]
			e.discards[n-1] = nil
			e.discards = e.discards[:n-1]
			return nil, d, true
		}
		fast := e.runq.len() > 0
		canSlow := e.slowq.len() > 0 && e.slowBusy < e.slowMax
		if fast && canSlow {
			e.turn = !e.turn
			fast = e.turn
		}
		switch {
		case fast:
			q = e.runq.pop()
			if q.hung() {
				// Its endpoint stopped answering while q waited in line.
				e.slowq.push(q)
				continue
			}
		case canSlow:
			q = e.slowq.pop()
			e.slowBusy++
			w.slow = true
		default:
			// Whoever takes w from idle wakes it; it then looks again, as
			// another worker may have taken the work meanwhile.
			e.idle = append(e.idle, w)
			w.wake.Wait()
			continue
		}
		q.scheduled.Store(false)
		w.q = q
		return q, nil, true
	}
}

// work is one worker: it serves queues until the engine stops or the
// watchdog parks it.
func (e *Engine) work(w *worker) {
	defer e.wg.Done()
	for {
		q, d, ok := e.next(w)
		if !ok {
			return
		}
		if d != nil {
			d.report()
			continue
		}
		q.serve(w)
	}
}

// suspectAfter returns how long a request of q may be in flight before it
// is suspect: four times the subscription's usual answer time, within
// [SuspectAfter/5, SuspectAfter]; SuspectAfter/5 while the subscription has
// no usual answer time yet.
func (q *queue) suspectAfter() int64 {
	hi := int64(q.e.opts.SuspectAfter)
	lo := hi / 5
	u := q.usual.Load()
	if u == 0 {
		return lo
	}
	return min(hi, max(lo, 4*u))
}

// noteAnswer folds the time an answer took into the subscription's usual
// answer time, a moving average. An answer counts as four times the usual
// time at most, so that the few requests that stall do not make the usual
// time theirs, while an endpoint that turns slow raises it by more than a
// third per answer. Concurrent updates may lose one another, which an
// average can afford.
func (q *queue) noteAnswer(ns int64) {
	ns = max(ns, 1)
	u := q.usual.Load()
	if u == 0 {
		q.usual.Store(ns)
		return
	}
	ns = min(ns, 4*u)
	q.usual.Store(u + (ns-u)/8)
}

// watchTick is the watchdog's period: SuspectAfter/200 (5 ms by
// default), at least a millisecond, so that a stalled request is found
// soon after stallAfter.
func (e *Engine) watchTick() time.Duration {
	return max(e.opts.SuspectAfter/200, time.Millisecond)
}

// watching makes sure the watchdog runs while a request is in flight: the
// caller has just counted its request in Engine.inFlight.
func (e *Engine) watching() {
	if e.watchOn.Load() {
		return
	}
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	if e.watchOn.Load() || e.watchOff {
		return
	}
	e.watchOn.Store(true)
	tick := e.watchTick()
	if e.watch == nil {
		e.watch = e.clock.AfterFunc(tick, e.onWatch)
		return
	}
	e.watch.Reset(tick)
}

// unwatch stops the watchdog once no request is in flight: the caller has
// just seen Engine.inFlight fall to zero.
func (e *Engine) unwatch() {
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	// Cleared first: a request that starts meanwhile either sees it cleared
	// and re-arms, or counted itself before the check below.
	e.watchOn.Store(false)
	if e.inFlight.Load() != 0 {
		e.watchOn.Store(true)
		return
	}
	if e.watch != nil {
		e.watch.Stop()
	}
}

// stopWatch stops the watchdog for good: the engine is stopping.
func (e *Engine) stopWatch() {
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	e.watchOff = true
	e.watchOn.Store(false)
	if e.watch != nil {
		e.watch.Stop()
	}
}

// onWatch is the watchdog: it finds the requests of the pool that have been
// in flight longer than their subscription's suspectAfter, and the stalled
// requests (stall.go). A suspect request is parked: its worker leaves the
// pool and a new one takes its slot, so that the pool keeps serving the
// other subscriptions. A stalled request is parked as soon as it stalls,
// before it is suspect, while fewer than half of parkMax are parked: an
// endpoint that leaves a share of its requests unanswered would otherwise
// hold a worker for each until it turned suspect (200 ms at least), and
// those workers, not the endpoints, then set how fast every subscription
// was served. The other half is kept for the requests that turn suspect.
// At most parkMax requests are parked; beyond that a suspect request keeps
// its worker and counts against the slow line's share of the pool, and when
// that is full, or others wait in the slow line, the request is cancelled
// as timed out: the fast line's workers are never held by a suspect request
// for longer than a watchdog round, and the slow line keeps moving.
func (e *Engine) onWatch() {
	if !e.watchOn.Load() {
		return
	}
	for _, q := range e.scan(e.nanos(e.clock.Now())) {
		q.kick() // a request of q stalled: it may send another
	}
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	if e.watchOn.Load() {
		e.watch.Reset(e.watchTick())
	}
}

// scan parks or counts the requests of the pool that turned suspect by now,
// then marks the requests, in the pool or parked, that stalled. It returns
// the queues that may send more because a request of theirs stalled.
func (e *Engine) scan(now int64) (more []*queue) {
	e.sched.Lock()
	defer e.sched.Unlock()
	if e.stopping {
		return nil
	}
	for i, w := range e.slots {
		if w.q == nil {
			continue
		}
		age := now - w.start.Load()
		isSuspect := age > w.q.suspectAfter()
		parkStalled := age > w.q.stallAfter() && len(e.parkedW) < e.parkMax/2
		if !isSuspect && !parkStalled {
			continue
		}
		if _, ok := w.flag(suspect); !ok {
			continue // it has just ended
		}
		switch {
		case len(e.parkedW) < e.parkMax:
			w.pidx = len(e.parkedW)
			e.parkedW = append(e.parkedW, w)
			w.parked = true
			if w.slow {
				w.slow = false
				e.slowBusy--
			}
			e.startWorkerLocked(i)
		case w.slow && e.slowq.len() == 0:
			// It keeps its place in the slow line's share while no other
			// subscription waits for one.
		case !w.slow && e.slowBusy < e.slowMax:
			w.slow = true
			e.slowBusy++
		default:
			e.cancelLocked(w, aborted)
		}
	}
	for _, w := range e.slots {
		more = e.stall(w, now, more)
	}
	for _, w := range e.parkedW {
		more = e.stall(w, now, more)
	}
	return more
}

// cancelLocked cancels w's request for the reason why (aborted or cut),
// unless it has ended. A stalled request stops counting as stalled at once.
// Called with Engine.sched held: cancelling only closes the request's
// context, no I/O, no logging.
func (e *Engine) cancelLocked(w *worker, why int32) {
	if was, ok := w.flag(why); ok {
		if was&stalled != 0 {
			w.q.stalled.Add(-1)
		}
		w.cancel()
	}
}

// fifo is a first-in first-out list that reuses its memory.
type fifo[T any] struct {
	items []T
	head  int
}

func (f *fifo[T]) len() int { return len(f.items) - f.head }

func (f *fifo[T]) push(v T) {
	if f.head > 0 && f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	}
	f.items = append(f.items, v)
}

func (f *fifo[T]) pop() T {
	var zero T
	v := f.items[f.head]
	f.items[f.head] = zero
	f.head++
	if f.head > 64 && f.head*2 > len(f.items) {
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	return v
}
