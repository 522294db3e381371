package push

import (
	"context"
	"fmt"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// taken is a batch with the queue items it came from, and what taking and
// completing it left to report once the queue's lock is released (see
// flush). A worker reuses one for all its batches, so senders must not
// keep a Batch after Send returns.
type taken struct {
	Batch
	items []item
	// rec is the record of the attempt, begun and then ended; gaveUp the
	// events given up on; outs, while someone watches, each event's
	// outcome; firsts the first attempts' delays.
	rec    outcome.Record
	gaveUp []outcome.Record
	outs   []outcome.Event
	firsts []time.Duration
	// took is how long the request took.
	took time.Duration
	// released is set, under the queue's lock, when the subscription is
	// deleted while the batch is in flight: its events have left the
	// budget already.
	released bool
}

// serve takes one batch from the queue, sends it and records its outcome.
func (q *queue) serve(w *worker) {
	b := &w.b
	q.mu.Lock()
	now := q.e.clock.Now()
	ok := q.takeLocked(now, b)
	if ok {
		q.inflight++
		q.flying = append(q.flying, b)
	}
	q.scheduleLocked() // more to send: back in line behind the others
	q.mu.Unlock()
	q.flush(b, false)
	if !ok {
		return
	}
	q.started(b, now)
	err, begun, end := q.send(w, b, now)
	res := Classify(err)

	q.mu.Lock()
	q.landLocked(b)
	q.completeLocked(b, err, res, begun, end)
	q.scheduleLocked()
	q.mu.Unlock()
	q.flush(b, true)
}

// started reports the attempt b begins at now.
func (q *queue) started(b *taken, now time.Time) {
	b.firsts = b.firsts[:0]
	for i := range b.items {
		if it := &b.items[i]; it.attempts == 1 {
			b.firsts = append(b.firsts, now.Sub(it.s.Accepted))
		}
	}
	b.rec = outcome.Record{Kind: outcome.Started, Sub: b.Subscription, Time: now, Events: len(b.items), FirstDelays: b.firsts}
	q.out.Report(&b.rec)
}

// send makes b's request, which the watchdog follows, and returns its
// error (which explains a request the watchdog cancelled), and when it
// began, in ns since Engine.epoch, and ended. b.took is how long it took.
func (q *queue) send(w *worker, b *taken, now time.Time) (err error, begun int64, end time.Time) {
	e := q.e
	ctx, cancel := context.WithTimeout(e.sendCtx, e.opts.DeliverTimeout)
	// The watchdog reads cancel after seeing the state flying, and before
	// this worker can start another request (see worker).
	w.cancel = cancel
	w.start.Store(e.nanos(now))
	w.state.Store(flying)
	e.inFlight.Add(1)
	e.watching() // after counting the request: see unwatch
	start := time.Now()
	err = e.sender.Send(ctx, &b.Batch)
	cancel()
	b.took = time.Since(start)
	end = e.clock.Now()
	begun = w.start.Load()
	if err == nil || Classify(err).StatusCode != 0 {
		// Noted before the request stops counting as stalled: see hung.
		q.noteAnswer(e.nanos(end) - begun)
		storeMax(&q.answered, begun)
	}
	err = q.settle(w.state.Swap(idle), err, time.Duration(e.nanos(end)-begun))
	if e.inFlight.Add(-1) == 0 {
		e.unwatch()
	}
	return err, begun, end
}

// landLocked takes b, whose request ended, off the requests in flight.
func (q *queue) landLocked(b *taken) {
	q.inflight--
	for i, f := range q.flying {
		if f == b {
			last := len(q.flying) - 1
			q.flying[i], q.flying[last] = q.flying[last], nil
			q.flying = q.flying[:last]
			return
		}
	}
}

// flush reports, with no lock held, what taking or completing b left to
// report: the attempt's end (when ended), then the events given up on.
func (q *queue) flush(b *taken, ended bool) {
	if ended {
		q.out.Report(&b.rec)
	}
	for i := range b.gaveUp {
		q.out.Report(&b.gaveUp[i])
	}
	clear(b.gaveUp)
	clear(b.outs)
	b.gaveUp, b.outs = b.gaveUp[:0], b.outs[:0]
	b.rec = outcome.Record{}
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
	if q.closed || q.paused() || !q.mayStartLocked() {
		return false
	}
	q.promoteLocked(q.e.nanos(now))
	maxEvents, maxBytes := q.batchCapsLocked()
	size := 2 // the array's brackets
	for q.ready.len() > 0 && len(b.items) < maxEvents {
		it := q.ready.front()
		if now.Sub(it.s.Accepted) > q.pol.TTL {
			q.dropLocked(q.ready.pop(), outcome.TimeToLiveExceeded, now, b)
			continue
		}
		if int(it.attempts) >= q.pol.MaxAttempts { // the policy was lowered meanwhile
			q.dropLocked(q.ready.pop(), outcome.MaxDeliveryAttemptsExceeded, now, b)
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
	n := q.ready.len()
	for i := range q.backoff {
		l := &q.backoff[i]
		for l.len() > 0 && l.front().due <= now {
			q.ready.push(l.pop())
		}
	}
	for q.timed.len() > 0 && q.timed.min().due <= now {
		q.ready.push(q.timed.pop())
	}
	if q.ready.len() > n && q.paused() {
		// A retried event may be older than every ready one: the first
		// expiry is looked for again (watchExpiryLocked).
		q.expireAt = 0
	}
}

// completeLocked records the end of b's attempt in b.rec: delivered events
// leave the queue; failed ones move, each on its own, to the list their
// retry policy gives, or are given up on by it.
func (q *queue) completeLocked(b *taken, err error, res Result, start int64, now time.Time) {
	b.rec = outcome.Record{Kind: outcome.Attempted, Sub: q.sub, Time: now, Events: len(b.items),
		Attempt: b.DeliveryCount + 1, Status: res.StatusCode, Err: err, Latency: b.took}
	released := b.released // the subscription was deleted meanwhile
	b.released = false
	n := len(b.items)
	if err != nil {
		n = acceptedOf(err, n)
	}
	// The destination took these, all or the first n before it failed:
	// they leave the queue, and only the rest are retried.
	if !released {
		for i := range b.items[:n] {
			q.deliveredItem(&b.items[i], now)
		}
	}
	q.noteOutcomesLocked(b, b.items[:n])
	if err == nil {
		q.succeededLocked(now)
	} else {
		rest := copy(b.items, b.items[n:])
		clear(b.items[rest:])
		b.items = b.items[:rest]
		b.rec.Failed = rest
		q.failedLocked(b, err, res, start, now, released)
	}
	b.rec.Outcomes = b.outs
}

// succeededLocked notes that an attempt succeeded at now.
func (q *queue) succeededLocked(now time.Time) {
	q.proven = true
	q.failures, q.probation = 0, 0
	q.ctl.answered(false)
	q.ctl.succeeded(q.e.nanos(now), q.e.opts.MaxPerSubscription)
}

// failedLocked notes that an attempt of b, begun at start, failed at now
// with err, and moves b's events, each on its own, to the list their retry
// policy gives, or gives up on them; not when released, as the
// subscription's deletion took them already.
func (q *queue) failedLocked(b *taken, err error, res Result, start int64, now time.Time, released bool) {
	e := q.e
	nowNs := e.nanos(now)
	q.failures++
	q.ctl.answered(res.Outcome == OutcomeBusy)
	if res.Outcome == OutcomeBusy {
		q.ctl.overloaded(start, nowNs)
	}
	// The text the API shows, without the broker host's own addresses
	// (errtext.go); the log line below keeps err as it is.
	q.lastFailure, q.lastError = now, ErrorText(err)
	q.noteErrorLocked(res, q.lastError)
	if released {
		return
	}
	if q.pol.Schedule == eventgrid.CloudExponential && q.failures >= e.opts.ProbationAfterFailures {
		q.probation = nowNs + int64(scaled(probationLength(res.Outcome), q.pol.Scale))
		q.ctl.probe()
	}
	for _, it := range b.items {
		it.status, it.outcome = uint16(min(res.StatusCode, 65535)), res.Outcome
		it.lastAt = nowNs
		if it.forced {
			q.waitAgainLocked(it, b, now)
			continue
		}
		d := NextAttempt(q.pol, int(it.attempts), it.s.Accepted, now, res, e.opts.Jitter())
		if d.Drop != "" {
			q.dropLocked(it, d.Drop, now, b)
			continue
		}
		it.due = e.nanos(d.Due)
		q.noteRetryLocked(b, &it, now)
		if d.List == listTimed {
			q.timed.push(it)
		} else {
			q.backoff[d.List].push(it)
		}
	}
	q.armLocked(nowNs)
}

// dropLocked gives up on an event for reason: to the dead-letter
// destination when the subscription has one, where it is kept, not
// dropped. Either way the worker reports it once the lock is released.
func (q *queue) dropLocked(it item, reason outcome.Reason, now time.Time, b *taken) {
	e := q.e
	kept := q.sub.DeadLetter != nil && e.rep.DeadLetters()
	rec := outcome.Record{Kind: outcome.GaveUp, Sub: q.sub, Time: now, Reason: reason, Body: it.body,
		Attempt: int(it.attempts), Status: int(it.status), LastOutcome: it.outcome.String(),
		LastError: q.errorOfLocked(&it), Published: it.s.Accepted, DeadLettered: kept}
	if it.attempts > 0 {
		rec.LastAttempt = e.wall(it.lastAt, now)
	}
	if kept {
		rec.Done = func() { q.releaseItem(&it) }
	} else {
		q.releaseItem(&it)
	}
	b.gaveUp = append(b.gaveUp, rec)
}
