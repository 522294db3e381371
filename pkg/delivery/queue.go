package delivery

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// item is one event waiting for one subscription. Many may be queued, so it
// is kept small: the event's body, its request, its due time, and what the
// last attempt came to (dead letters and logs need it).
type item struct {
	body     []byte
	s        *shared // the request the event came in
	due      int64   // when a waiting item is due, in ns since Engine.epoch
	attempts int32   // attempts made so far, including one in flight
	lastAt   uint32  // when the last attempt ended, in ms after acceptance
	status   uint16  // the last attempt's HTTP status, 0 if none
	outcome  Outcome // the last attempt's outcome
}

// queue holds one subscription's events: those ready for an attempt, those
// waiting in the two EdgeQueues back-off lists (appended with a fixed delay,
// so ordered by due time) and those waiting on the CloudExponential schedule
// (a heap by due time).
type queue struct {
	e   *Engine
	uid uint64
	// events and bytes are the subscription's share of the budget in use,
	// reserved by Publish before the items are pushed.
	events atomic.Int64
	bytes  atomic.Int64

	mu      sync.Mutex
	sub     *eventgrid.EventSubscription
	pol     Policy
	ready   deque
	backoff [2]deque
	timed   heap
	// inflight requests; limit is how many may be: it starts at one, doubles
	// with each success up to MaxPerSubscription, and halves with each
	// failure.
	inflight int
	limit    int
	// failures counts consecutive failed attempts; probation, when after
	// now, is when B4's probation ends.
	failures  int
	probation int64
	timer     Timer
	timerAt   int64 // when timer fires; 0 when not armed
	closed    bool  // deleted or shut down: nothing more is queued
	stopped   bool  // the engine is stopping: no timers, no scheduling
	// scheduled is set while the queue is in a run queue: set under
	// Engine.sched, cleared by the worker that takes the queue from it, and
	// read without a lock by schedule's fast path.
	scheduled atomic.Bool

	lastFailure time.Time
	lastError   string

	// logs rate-limit the failure and expiry lines, by logKind; logTimer
	// flushes their suppressed counts when a window ends.
	logs     [numLogKinds]logLimiter
	logTimer Timer
}

func newQueue(e *Engine, sub *eventgrid.EventSubscription) *queue {
	q := &queue{e: e, uid: sub.UID, limit: 1}
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
// putting the queue in line: Publish calls kick once the request's events
// are all queued, so that a batch can carry the whole request. It returns
// false if the queue was discarded.
func (q *queue) push(it item, reserved int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	if d := len(it.body) - reserved; d != 0 {
		q.bytes.Add(int64(d)) // a converted body
	}
	if q.probation != 0 {
		if now := q.e.nanos(q.e.clock.Now()); q.onProbationLocked(now) {
			// B4: new events skip the immediate attempt while the endpoint
			// is on probation, and wait for its end. Never attempted, they
			// would be dead-lettered with the outcome Probation.
			it.due, it.outcome = q.probation, OutcomeProbation
			q.timed.push(it)
			q.armLocked(now)
			return true
		}
	}
	q.ready.push(it)
	return true
}

// kick puts the queue in line for a worker if it has anything to send.
func (q *queue) kick() {
	q.mu.Lock()
	q.scheduleLocked()
	q.mu.Unlock()
}

func (q *queue) onProbationLocked(now int64) bool { return q.probation > now }

// update applies a subscription's new settings; they take effect for the
// events already queued from their next attempt on.
func (q *queue) update(sub *eventgrid.EventSubscription) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.setSubLocked(sub)
	q.scheduleLocked()
}

// scheduleLocked puts the queue in line for a worker when it has a batch it
// may send now.
func (q *queue) scheduleLocked() {
	if q.closed || q.stopped || q.ready.len() == 0 || q.inflight >= q.limit {
		return
	}
	q.e.schedule(q, q.failures > 0)
}

// taken is a batch with the queue items it came from, and what taking and
// completing it left to do once the queue's lock is released: log lines and
// dead letters. A worker reuses one for all its batches, so senders must not
// keep a Batch after Send returns.
type taken struct {
	Batch
	items   []item
	notes   []note
	letters []DeadLetter
}

// serve takes one batch from the queue and sends it.
func (q *queue) serve(b *taken) {
	e := q.e
	q.mu.Lock()
	ok := q.takeLocked(e.clock.Now(), b)
	if ok {
		q.inflight++
		e.inFlight.Add(1)
	}
	q.scheduleLocked() // more to send: back in line behind the others
	q.mu.Unlock()
	b.flush(e)
	if !ok {
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(e.sendCtx, e.opts.DeliverTimeout)
	err := e.sender.Send(ctx, &b.Batch)
	cancel()
	e.inFlight.Add(-1)
	took := time.Since(start)
	if n := acceptedOf(err, len(b.items)); n > 0 {
		// The destination took the first n: they count as delivered.
		e.metrics.Attempt(b.Subscription, n, took, nil)
		e.metrics.Attempt(b.Subscription, len(b.items)-n, took, err)
	} else {
		e.metrics.Attempt(b.Subscription, len(b.items), took, err)
	}
	res := Classify(err)

	q.mu.Lock()
	q.inflight--
	q.completeLocked(b, err, res, e.clock.Now())
	q.scheduleLocked()
	q.mu.Unlock()
	b.flush(e)
}

// takeLocked moves due waiting items to the ready list and takes the next
// batch from it into b, dropping events whose retry policy has run out. It
// returns false when nothing may be sent now.
func (q *queue) takeLocked(now time.Time, b *taken) bool {
	b.Subscription, b.DeliveryCount = q.sub, 0
	clear(b.items) // drop the previous batch's references
	clear(b.Bodies)
	b.items, b.Bodies = b.items[:0], b.Bodies[:0]
	if q.closed || q.inflight >= q.limit {
		return false
	}
	q.promoteLocked(q.e.nanos(now))
	maxEvents, maxBytes := q.batchCapsLocked()
	size := 2 // the array's brackets
	for q.ready.len() > 0 && len(b.items) < maxEvents {
		it := q.ready.front()
		if now.Sub(it.s.accepted) > q.pol.TTL {
			q.dropLocked(q.ready.pop(), DropExpired, now, b)
			continue
		}
		if int(it.attempts) >= q.pol.MaxAttempts { // the policy was lowered meanwhile
			q.dropLocked(q.ready.pop(), DropMaxAttempts, now, b)
			continue
		}
		n := len(it.body)
		if len(b.items) > 0 {
			if maxBytes > 0 && size+1+n > maxBytes {
				break
			}
			size++ // comma
		}
		size += n
		it2 := q.ready.pop()
		if it2.attempts == 0 {
			q.e.metrics.FirstAttempt(q.sub, now.Sub(it2.s.accepted))
		}
		b.DeliveryCount = max(b.DeliveryCount, int(it2.attempts))
		it2.attempts++
		b.items = append(b.items, it2)
		b.Bodies = append(b.Bodies, it2.body)
	}
	return len(b.items) > 0
}

// batchCapsLocked returns the most events and bytes one request may carry.
func (q *queue) batchCapsLocked() (events, bytes int) {
	d := q.sub.Destination
	if !d.Batching() {
		return 1, 0
	}
	o := &q.e.opts
	events, bytes = o.DefaultMaxEventsPerBatch, o.DefaultMaxBatchBytes
	if d.MaxEventsPerBatch > 0 {
		events = d.MaxEventsPerBatch
	}
	if d.PreferredBatchSizeInKilobytes > 0 {
		bytes = d.PreferredBatchSizeInKilobytes * 1024
	}
	return events, bytes
}

// promoteSlack lets a wake-up take items due within the next millisecond
// too, so that events that failed together are retried together (and one
// timer serves them) instead of one by one, microseconds apart.
const promoteSlack = int64(time.Millisecond)

// promoteLocked moves waiting items that are due to the ready list.
func (q *queue) promoteLocked(now int64) {
	now += promoteSlack
	for i := range q.backoff {
		l := &q.backoff[i]
		for l.len() > 0 && l.front().due <= now {
			q.ready.push(l.pop())
		}
	}
	for q.timed.len() > 0 && q.timed.min().due <= now {
		q.ready.push(q.timed.pop())
	}
}

// completeLocked records the outcome of a batch: delivered events leave the
// queue; failed ones move, each on its own, to the list their retry policy
// gives, or are dropped by it.
func (q *queue) completeLocked(b *taken, err error, res Result, now time.Time) {
	e := q.e
	sub := b.Subscription
	if err == nil {
		for i := range b.items {
			q.releaseItem(&b.items[i])
		}
		q.failures, q.probation = 0, 0
		q.limit = min(q.limit*2, e.opts.MaxPerSubscription)
		if e.opts.LogDeliverySuccess {
			b.notes = append(b.notes, note{kind: noteDelivered, events: len(b.items), attempt: b.DeliveryCount})
		}
		return
	}
	if n := acceptedOf(err, len(b.items)); n > 0 {
		// The destination took these before it failed: they leave the
		// queue, and only the rest are retried.
		for i := range b.items[:n] {
			q.releaseItem(&b.items[i])
		}
		rest := copy(b.items, b.items[n:])
		clear(b.items[rest:])
		b.items = b.items[:rest]
	}
	q.failures++
	q.limit = max(1, q.limit/2)
	q.lastFailure, q.lastError = now, err.Error()
	if e.opts.LogDeliveryFailure {
		if ok, suppressed := q.allowLogLocked(logFailure, now); ok {
			b.notes = append(b.notes, note{kind: noteFailed, events: len(b.items), attempt: b.DeliveryCount + 1, err: err, suppressed: suppressed})
		}
	}
	if q.closed {
		for i := range b.items {
			e.metrics.Dropped(sub, DropDeleted, 1)
			q.releaseItem(&b.items[i])
		}
		return
	}
	nowNs := e.nanos(now)
	if q.pol.Schedule == eventgrid.CloudExponential && q.failures >= e.opts.ProbationAfterFailures {
		q.probation = nowNs + int64(float64(probationLength(res.Outcome))*q.pol.Scale)
		q.limit = 1
	}
	for _, it := range b.items {
		it.status, it.outcome = uint16(min(res.StatusCode, 65535)), res.Outcome
		it.lastAt = uint32(max(0, now.Sub(it.s.accepted).Milliseconds()))
		d := NextAttempt(q.pol, int(it.attempts), it.s.accepted, now, res, e.opts.Jitter())
		if d.Drop != "" {
			q.dropLocked(it, d.Drop, now, b)
			continue
		}
		it.due = e.nanos(d.Due)
		if d.List == listTimed {
			q.timed.push(it)
		} else {
			q.backoff[d.List].push(it)
		}
	}
	q.armLocked(nowNs)
}

// dropLocked removes an event from the queue because of its retry policy:
// to the dead-letter destination when the subscription has one.
func (q *queue) dropLocked(it item, reason DropReason, now time.Time, b *taken) {
	e := q.e
	e.metrics.Dropped(q.sub, reason, 1)
	if e.opts.LogEventExpiry {
		if ok, suppressed := q.allowLogLocked(logExpiry, now); ok {
			b.notes = append(b.notes, note{kind: noteDropped, body: it.body, reason: reason, attempt: int(it.attempts),
				age: now.Sub(it.s.accepted), suppressed: suppressed})
		}
	}
	if q.sub.DeadLetter == nil || e.opts.DeadLetterer == nil {
		q.releaseItem(&it)
		return
	}
	l := DeadLetter{
		Subscription: q.sub,
		Body:         it.body,
		Reason:       deadLetterReason(reason, it.outcome),
		Attempts:     int(it.attempts),
		Last:         Result{Outcome: it.outcome, StatusCode: int(it.status)},
		Published:    it.s.accepted,
		Done:         func() { q.releaseItem(&it) },
	}
	if it.attempts > 0 {
		l.LastAttempt = it.s.accepted.Add(time.Duration(it.lastAt) * time.Millisecond)
	}
	b.letters = append(b.letters, l)
}

// armLocked sets the timer for the earliest due waiting item.
func (q *queue) armLocked(now int64) {
	if q.closed || q.stopped {
		return
	}
	var next int64
	found := false
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

// onTimer runs when waiting items fall due.
func (q *queue) onTimer() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.timerAt = 0
	if q.closed || q.stopped {
		return
	}
	now := q.e.nanos(q.e.clock.Now())
	q.promoteLocked(now)
	q.scheduleLocked()
	q.armLocked(now)
}

// stop ends the queue's timers and scheduling for good: the engine is
// stopping.
func (q *queue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.stopTimersLocked()
}

func (q *queue) stopTimersLocked() {
	if q.timer != nil {
		q.timer.Stop()
	}
	if q.logTimer != nil {
		q.logTimer.Stop()
	}
	q.timerAt = 0
}

// discard is a detached queue's content, released by whoever runs it.
type discard struct {
	q          *queue
	sub        *eventgrid.EventSubscription
	reason     DropReason
	lists      [4]deque
	timed      heap
	suppressed [numLogKinds]int
}

// detach empties the queue for good and returns its events for release
// outside the lock, or nil if it was already detached. Batches in flight
// finish, and are then dropped too.
func (q *queue) detach(reason DropReason) *discard {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	q.stopTimersLocked()
	d := &discard{q: q, sub: q.sub, reason: reason}
	d.lists[0], q.ready = q.ready, deque{}
	d.lists[1], q.backoff[0] = q.backoff[0], deque{}
	d.lists[2], q.backoff[1] = q.backoff[1], deque{}
	d.timed, q.timed = q.timed, heap{}
	for k := range q.logs {
		d.suppressed[k] = q.logs[k].take()
	}
	return d
}

// run releases the events, counts them and logs what needs saying. It
// returns how many events were discarded.
func (d *discard) run(e *Engine) int {
	n := 0
	release := func(it item) {
		n++
		d.q.releaseItem(&it)
	}
	for i := range d.lists {
		d.lists[i].clear(release)
	}
	for d.timed.len() > 0 {
		release(d.timed.pop())
	}
	if n > 0 {
		e.metrics.Dropped(d.sub, d.reason, n)
	}
	for k, s := range d.suppressed {
		if s > 0 {
			logSuppressed(e, d.sub, logKind(k), s)
		}
	}
	if n > 0 && d.reason == DropDeleted {
		e.log.Warn().Str("topic", d.sub.Topic).Str("subscription", d.sub.Name).Int("events", n).Msg("event subscription deleted; its queued events were discarded")
	}
	return n
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
		ConcurrencyLimit: q.limit,
		LastFailure:      q.lastFailure,
		LastError:        q.lastError,
	}
	if now := q.e.nanos(q.e.clock.Now()); q.onProbationLocked(now) {
		st.ProbationUntil = q.e.epoch.Add(time.Duration(q.probation))
	}
	return st
}

// eventID returns the id in an event body, for log lines; "" when it has
// none (custom events).
func eventID(body []byte) string {
	v, ok := rawjson.Member(body, "id")
	if !ok {
		return ""
	}
	id, _ := rawjson.Unquote(v)
	return id
}
