package push

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// item is one event waiting for one subscription. Many may be queued, so it
// is kept small: the event's body, its request, its due time, and what the
// last attempt came to (dead letters and logs need it).
//
// The fields are ordered so that the item takes 64 bytes.
type item struct {
	body     []byte
	s        *budget.Hold // the request the event came in
	due      int64        // when a waiting item is due, in ns since Engine.epoch
	attempts int32        // attempts made so far, including one in flight
	// seq numbers the queue's events as they were queued, so that a peek
	// shows a request's events in their order (it wraps, harmlessly).
	seq     uint32
	lastAt  int64   // when the last attempt ended, in ns since Engine.epoch
	status  uint16  // the last attempt's HTTP status, 0 if none
	outcome Outcome // the last attempt's outcome
	// forced marks an event retry now made ready: its attempt does not
	// count if it fails, and due keeps when it was due (inspect.go).
	forced bool
}

// queue holds one subscription's events: those ready for an attempt, those
// waiting in the two EdgeQueues back-off lists (appended with a fixed delay,
// so ordered by due time) and those waiting on the CloudExponential schedule
// (a heap by due time).
type queue struct {
	e   *Engine
	uid uint64
	// share is the subscription's part of the broker's budget, reserved
	// by the publish path before the items are pushed (see Enqueue).
	share budget.Share

	mu      sync.Mutex
	sub     *eventgrid.EventSubscription
	pol     Policy
	ready   deque
	backoff [2]deque
	timed   heap
	// inflight requests; ctl sizes how many may count against the
	// subscription (control.go). flying are the batches in flight.
	inflight int
	ctl      control
	flying   []*taken
	// proven is set by the first success: until then the subscription is
	// unproven and waits in the slow line.
	proven bool
	// stalled counts the requests in flight that the watchdog found
	// stalled (stall.go), stallStart is when the latest of them was sent,
	// hungAt when the subscription was last found hung (stall.go),
	// and answered when the latest request that got an answer was sent,
	// in ns since Engine.epoch.
	// usual is the usual answer time, in ns (0 before the first answer).
	// All are atomics: the watchdog reads them under Engine.sched, which
	// may not take the queue's lock.
	stalled    atomic.Int32
	stallStart atomic.Int64
	hungAt     atomic.Int64
	answered   atomic.Int64
	usual      atomic.Int64
	// failures counts consecutive failed attempts; probation, when after
	// now, is when the subscription's probation ends (CloudExponential: new
	// events wait for it instead of being tried at once).
	failures  int
	probation int64
	timer     clock.Timer
	timerAt   int64 // when timer fires; 0 when not armed
	closed    bool  // deleted or shut down: nothing more is queued
	stopped   bool  // the engine is stopping: no timers, no scheduling
	// seq is the number of the last event queued (item.seq).
	seq uint32
	// pausedSince, when not zero, is when the subscription's delivery was
	// paused (pause.go): nothing is sent, and expireAt, when not zero, is
	// when the next ready event outlives its time to live.
	pausedSince time.Time
	expireAt    int64
	// scheduled is set while the queue is in a run queue: set under
	// Engine.sched, cleared by the worker that takes the queue from it, and
	// read without a lock by schedule's fast path.
	scheduled atomic.Bool

	lastFailure time.Time
	lastError   string
	// out reports the subscription's records (package outcome); errs
	// keeps the texts of recent failed attempts, by class (inspect.go).
	out  *outcome.Sub
	errs map[errKey]string
}

func newQueue(e *Engine, sub *eventgrid.EventSubscription) *queue {
	q := &queue{e: e, uid: sub.UID, ctl: newControl(e.opts.MaxPerSubscription), out: e.rep.For(sub)}
	q.setSubLocked(sub)
	return q
}

// setSubLocked takes sub's settings.
func (q *queue) setSubLocked(sub *eventgrid.EventSubscription) {
	o := &q.e.opts
	q.sub = sub
	q.pol = Policy{
		Schedule:    o.DefaultSchedule,
		MaxAttempts: o.DefaultMaxDeliveryAttempts,
		TTL:         o.DefaultTTL,
		Backoff:     o.Backoff,
		Scale:       o.ExponentialScale,
	}
	if p := sub.RetryPolicy; p != nil {
		if p.MaxDeliveryAttempts > 0 {
			q.pol.MaxAttempts = p.MaxDeliveryAttempts
		}
		if p.EventExpiryInMinutes > 0 {
			q.pol.TTL = time.Duration(p.EventExpiryInMinutes) * time.Minute
		}
		if p.Schedule != "" {
			q.pol.Schedule = p.Schedule
		}
	}
	if q.pol.Schedule != eventgrid.CloudExponential && q.probation != 0 {
		q.endProbationLocked()
	}
}

// takeWaitingLocked passes each event waiting for a later attempt (on
// the back-off lists and the schedule's heap) to f, and leaves them empty.
func (q *queue) takeWaitingLocked(f func(item)) {
	for i := range q.backoff {
		q.backoff[i].clear(f)
	}
	for q.timed.len() > 0 {
		f(q.timed.pop())
	}
}

// endProbationLocked ends a probation that the subscription's schedule no
// longer has: the events that only waited for it are ready at once.
func (q *queue) endProbationLocked() {
	q.probation = 0
	var keep heap
	for q.timed.len() > 0 {
		it := q.timed.pop()
		if it.attempts == 0 && it.outcome == OutcomeProbation {
			it.due, it.outcome = 0, OutcomeNone
			q.ready.push(it)
			continue
		}
		keep.push(it)
	}
	q.timed = keep
}

// pushAll adds freshly published events, whose budget the publish path
// reserved, without putting the queue in line: Enqueue calls kick once they
// are all queued, so that a batch can carry the whole request. It returns
// how many it added: all, or none if the queue was discarded.
func (q *queue) pushAll(bodies [][]byte, h *budget.Hold) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0
	}
	var (
		t   time.Time
		now int64
	)
	if q.probation != 0 || q.paused() {
		t = q.e.clock.Now()
		now = q.e.nanos(t)
	}
	for _, body := range bodies {
		q.seq++
		it := item{body: body, s: h, seq: q.seq}
		if q.probation != 0 && q.onProbationLocked(now) {
			// New events skip the immediate attempt while the endpoint is
			// on probation, and wait for its end. Never attempted, they
			// would be dead-lettered with the outcome Probation
			// (docs/design.md#probation).
			it.due, it.outcome = q.probation, OutcomeProbation
			q.timed.push(it)
			continue
		}
		q.ready.push(it)
	}
	if q.paused() && q.expireAt == 0 {
		q.watchExpiryLocked(t)
		q.armLocked(now)
	}
	if q.probation != 0 {
		q.armLocked(now)
	}
	return len(bodies)
}

// kick puts the queue in line for a worker if it has anything to send.
func (q *queue) kick() {
	q.mu.Lock()
	q.scheduleLocked()
	q.mu.Unlock()
}

func (q *queue) onProbationLocked(now int64) bool { return q.probation > now }

// failingAfter is the number of consecutive failed attempts after which a
// subscription is failing and waits in the slow line: an endpoint that
// fails now and then keeps its place among the healthy ones.
const failingAfter = 3

// scheduleLocked puts the queue in line for a worker when it has a batch it
// may send now: in the slow line when it is unproven, failing or may hang.
func (q *queue) scheduleLocked() {
	if q.closed || q.stopped || q.paused() || q.ready.len() == 0 || !q.mayStartLocked() {
		return
	}
	q.e.schedule(q, !q.proven || q.failures >= failingAfter || q.hung())
}

// armLocked sets the timer for the earliest due waiting item.
func (q *queue) armLocked(now int64) {
	if q.closed || q.stopped {
		return
	}
	next, found := q.earliestDueLocked()
	if !found || (q.timerAt != 0 && q.timerAt <= next) {
		return // an earlier wake-up is already set; it re-arms
	}
	q.timerAt = next
	d := time.Duration(max(next-now, 0))
	if q.timer == nil {
		q.timer = q.e.clock.AfterFunc(d, q.onTimer)
		return
	}
	q.timer.Reset(d)
}

// earliestDueLocked returns when the earliest item waiting in back-off or
// on the schedule is due; found is false when none waits.
func (q *queue) earliestDueLocked() (next int64, found bool) {
	consider := func(due int64) {
		if !found || due < next {
			next, found = due, true
		}
	}
	for i := range q.backoff {
		if l := &q.backoff[i]; l.len() > 0 {
			consider(l.front().due)
		}
	}
	if q.timed.len() > 0 {
		consider(q.timed.min().due)
	}
	if q.expireAt != 0 {
		consider(q.expireAt)
	}
	return next, found
}

// onTimer runs when waiting items fall due, or, while the subscription is
// paused, when a ready one outlives its time to live.
func (q *queue) onTimer() {
	var expired *taken // what a paused queue gives up on, reported unlocked
	q.mu.Lock()
	q.timerAt = 0
	if q.closed || q.stopped {
		q.mu.Unlock()
		return
	}
	t := q.e.clock.Now()
	now := q.e.nanos(t)
	q.promoteLocked(now)
	if q.paused() {
		expired = new(taken)
		q.expireWhilePausedLocked(t, expired)
		q.watchExpiryLocked(t)
	}
	q.scheduleLocked()
	q.armLocked(now)
	q.mu.Unlock()
	if expired != nil {
		q.flush(expired, false)
	}
}

func (q *queue) stats() QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := QueueStats{
		Subscription:     q.sub,
		Ready:            q.ready.len(),
		Backoff:          [2]int{q.backoff[0].len(), q.backoff[1].len()},
		Scheduled:        q.timed.len(),
		InFlight:         q.inflight,
		ConcurrencyLimit: q.ctl.limit,
		LastFailure:      q.lastFailure,
		LastError:        q.lastError,
		Failures:         q.failures,
		PausedSince:      q.pausedSince,
	}
	now := q.e.clock.Now()
	st.NextAttempt = q.nextDueLocked(now)
	if q.onProbationLocked(q.e.nanos(now)) {
		st.ProbationUntil = q.e.wall(q.probation, now)
	}
	return st
}
