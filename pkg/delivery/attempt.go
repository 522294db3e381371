package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// taken is a batch with the queue items it came from, and what taking and
// completing it left to do once the queue's lock is released: log lines,
// drop counts and dead letters. A worker reuses one for all its batches, so
// senders must not keep a Batch after Send returns.
type taken struct {
	Batch
	items   []item
	notes   []note
	drops   []dropCount
	letters []eventgrid.DeadLetter
	// What the inspection API is told (inspect.go): the record, the
	// outcomes for those watching, the events given up on, and the
	// request's end, duration, status and error.
	rec     *inspect.Sub
	outs    []outNote
	gaveUp  []inspect.GivenUp
	ended   time.Time
	took    time.Duration
	status  int
	errText string
	// released is set, under the queue's lock, when the subscription is
	// deleted while the batch is in flight: its events have left the
	// budget already.
	released bool
}

// dropCount is a number of events dropped for one reason.
type dropCount struct {
	reason DropReason
	n      int
}

// serve takes one batch from the queue and sends it.
func (q *queue) serve(w *worker) {
	e := q.e
	b := &w.b
	q.mu.Lock()
	now := e.clock.Now()
	ok := q.takeLocked(now, b)
	if ok {
		q.inflight++
		q.flying = append(q.flying, b)
	}
	q.scheduleLocked() // more to send: back in line behind the others
	q.mu.Unlock()
	b.flush(e)
	if !ok {
		return
	}
	for i := range b.items {
		if it := &b.items[i]; it.attempts == 1 {
			e.metrics.FirstAttempt(b.Subscription, now.Sub(it.s.Accepted))
		}
	}
	ctx, cancel := context.WithTimeout(e.sendCtx, e.opts.DeliverTimeout)
	// The watchdog reads cancel after seeing the state flying, and before
	// this worker can start another request (see worker).
	w.cancel = cancel
	w.start.Store(e.nanos(now))
	w.state.Store(flying)
	e.inFlight.Add(1)
	e.watching() // after counting the request: see unwatch
	start := time.Now()
	err := e.sender.Send(ctx, &b.Batch)
	cancel()
	took := time.Since(start)
	end := e.clock.Now()
	begun := w.start.Load()
	res := Classify(err)
	if err == nil || res.StatusCode != 0 {
		// Noted before the request stops counting as stalled: see hung.
		q.noteAnswer(e.nanos(end) - begun)
		storeMax(&q.answered, begun)
	}
	err = q.settle(w.state.Swap(idle), err, time.Duration(e.nanos(end)-begun))
	if e.inFlight.Add(-1) == 0 {
		e.unwatch()
	}
	if n := acceptedOf(err, len(b.items)); n > 0 {
		// The destination took the first n: they count as delivered.
		e.metrics.Attempt(b.Subscription, n, took, nil)
		e.metrics.Attempt(b.Subscription, len(b.items)-n, took, err)
	} else {
		e.metrics.Attempt(b.Subscription, len(b.items), took, err)
	}
	res = Classify(err)
	q.recordAttempt(b, err, res, took, end)
	b.ended, b.took = end, took

	q.mu.Lock()
	q.inflight--
	for i, f := range q.flying {
		if f == b {
			last := len(q.flying) - 1
			q.flying[i], q.flying[last] = q.flying[last], nil
			q.flying = q.flying[:last]
			break
		}
	}
	q.completeLocked(b, err, res, begun, end)
	q.scheduleLocked()
	q.mu.Unlock()
	b.flush(e)
}

// settle ends the watchdog's count of a request that ended with flags,
// and explains a request it cancelled: the error it returns replaces err.
func (q *queue) settle(flags int32, err error, took time.Duration) error {
	if flags&stalled != 0 && flags&(aborted|cut) == 0 {
		q.stalled.Add(-1) // a cancelled one stopped counting when cancelled
	}
	switch {
	case err == nil:
	case flags&aborted != 0:
		err = fmt.Errorf("no answer in %v, cancelled to free its worker (the parked requests are at their limit): %w",
			took, context.DeadlineExceeded)
	case flags&cut != 0:
		err = fmt.Errorf("no answer in %v, cancelled: more than %d requests of this subscription were waiting past its usual answer time: %w",
			took, q.e.opts.MaxPerSubscription, context.DeadlineExceeded)
	}
	return err
}

// takeLocked moves due waiting items to the ready list and takes the next
// batch from it into b, dropping events whose retry policy has run out. It
// returns false when nothing may be sent now.
func (q *queue) takeLocked(now time.Time, b *taken) bool {
	b.Subscription, b.DeliveryCount = q.sub, 0
	clear(b.items) // drop the previous batch's references
	clear(b.Bodies)
	b.items, b.Bodies = b.items[:0], b.Bodies[:0]
	if q.closed || !q.mayStartLocked() {
		return false
	}
	q.promoteLocked(q.e.nanos(now))
	maxEvents, maxBytes := q.batchCapsLocked()
	size := 2 // the array's brackets
	for q.ready.len() > 0 && len(b.items) < maxEvents {
		it := q.ready.front()
		if now.Sub(it.s.Accepted) > q.pol.TTL {
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
func (q *queue) completeLocked(b *taken, err error, res Result, start int64, now time.Time) {
	e := q.e
	nowNs := e.nanos(now)
	released := b.released // the subscription was deleted meanwhile
	b.released = false
	if err == nil {
		if !released {
			for i := range b.items {
				q.deliveredItem(&b.items[i], now)
			}
		}
		q.proven = true
		q.failures, q.probation = 0, 0
		q.ctl.answered(false)
		q.ctl.succeeded(nowNs, e.opts.MaxPerSubscription)
		q.noteOutcomesLocked(b, inspect.OutcomeDelivered, b.items)
		if e.opts.LogDeliverySuccess {
			b.notes = append(b.notes, note{kind: noteDelivered, events: len(b.items), attempt: b.DeliveryCount})
		}
		return
	}
	if n := acceptedOf(err, len(b.items)); n > 0 {
		// The destination took these before it failed: they leave the
		// queue, and only the rest are retried.
		if !released {
			for i := range b.items[:n] {
				q.deliveredItem(&b.items[i], now)
			}
		}
		q.noteOutcomesLocked(b, inspect.OutcomeDelivered, b.items[:n])
		rest := copy(b.items, b.items[n:])
		clear(b.items[rest:])
		b.items = b.items[:rest]
	}
	q.failures++
	q.ctl.answered(res.Outcome == OutcomeBusy)
	if res.Outcome == OutcomeBusy {
		q.ctl.overloaded(start, nowNs)
	}
	// The text the API shows, without the broker host's own addresses
	// (errtext.go); the log line below keeps err as it is.
	q.lastFailure, q.lastError = now, ErrorText(err)
	q.noteErrorLocked(res, q.lastError)
	b.status, b.errText = res.StatusCode, q.lastError
	if e.opts.LogDeliveryFailure {
		if ok, suppressed := q.allowLogLocked(logFailure, now); ok {
			b.notes = append(b.notes, note{kind: noteFailed, events: len(b.items), attempt: b.DeliveryCount + 1, err: err, suppressed: suppressed})
		}
	}
	if released {
		return // detach released and counted the events
	}
	if q.pol.Schedule == eventgrid.CloudExponential && q.failures >= e.opts.ProbationAfterFailures {
		q.probation = nowNs + int64(scaled(probationLength(res.Outcome), q.pol.Scale))
		q.ctl.probe()
	}
	for _, it := range b.items {
		it.status, it.outcome = uint16(min(res.StatusCode, 65535)), res.Outcome
		it.lastAt = nowNs
		d := NextAttempt(q.pol, int(it.attempts), it.s.Accepted, now, res, e.opts.Jitter())
		if d.Drop != "" {
			q.dropLocked(it, d.Drop, now, b)
			continue
		}
		it.due = e.nanos(d.Due)
		q.noteRetryLocked(b, &it, d.Due)
		if d.List == listTimed {
			q.timed.push(it)
		} else {
			q.backoff[d.List].push(it)
		}
	}
	q.armLocked(nowNs)
}

// dropLocked removes an event from the queue because of its retry policy:
// to the dead-letter destination when the subscription has one, where it is
// kept, not dropped. Either way the worker logs and counts it once the lock
// is released.
func (q *queue) dropLocked(it item, reason DropReason, now time.Time, b *taken) {
	e := q.e
	kept := q.sub.DeadLetter != nil && e.opts.DeadLetterer != nil
	q.noteGivenUpLocked(b, &it, reason, kept, now)
	kind, lk := noteDropped, logExpiry
	if kept {
		kind, lk = noteDeadLettered, logDeadLetter
	} else {
		b.drop(reason, 1)
	}
	if e.opts.LogEventExpiry {
		if ok, suppressed := q.allowLogLocked(lk, now); ok {
			b.notes = append(b.notes, note{kind: kind, body: it.body, reason: reason, attempt: int(it.attempts),
				age: now.Sub(it.s.Accepted), suppressed: suppressed})
		}
	}
	if !kept {
		q.releaseItem(&it)
		return
	}
	l := eventgrid.DeadLetter{
		Subscription: q.sub,
		Body:         it.body,
		Reason:       deadLetterReason(reason, it.outcome),
		Attempts:     int(it.attempts),
		LastOutcome:  it.outcome.String(),
		LastStatus:   int(it.status),
		Published:    it.s.Accepted,
		Done:         func() { q.releaseItem(&it) },
	}
	if it.attempts > 0 {
		l.LastAttempt = e.epoch.Add(time.Duration(it.lastAt))
	}
	b.letters = append(b.letters, l)
}

// drop counts n events dropped for reason, for flush to report.
func (b *taken) drop(reason DropReason, n int) {
	if k := len(b.drops) - 1; k >= 0 && b.drops[k].reason == reason {
		b.drops[k].n += n
		return
	}
	b.drops = append(b.drops, dropCount{reason, n})
}
