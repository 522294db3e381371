package delivery

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// What the engine tells and shows the inspection API (docs/console.md):
// each queue reports to its subscription's record on the board
// (Options.Board) where it already knows what happened, and answers a peek
// and a retry now. Reports decided under a queue's lock are collected in
// the worker's taken and handed over by flush, with no lock held.

// outNote is the outcome of one event's attempt, for those watching.
type outNote struct {
	outcome string
	body    []byte
	attempt int32
	next    time.Time // of a failed event, when it is tried again
}

// errKey is a class of failed attempts: their outcome and HTTP status.
type errKey struct {
	outcome Outcome
	status  uint16
}

// maxErrTexts bounds the error texts a queue keeps by errKey.
const maxErrTexts = 32

// recordAttempt reports the end of a request to the subscription's record.
func (q *queue) recordAttempt(b *taken, err error, res Result, took time.Duration, end time.Time) {
	if q.rec == nil {
		return
	}
	ok := len(b.items)
	if err != nil {
		ok = acceptedOf(err, len(b.items))
	}
	q.rec.Attempted(ok, len(b.items)-ok, took, res.StatusCode, end)
}

// noteErrorLocked keeps the text of a failed attempt, so that a peek and
// the given-up list say why each event's last attempt failed: events that
// failed the same way (outcome and status) share one text.
func (q *queue) noteErrorLocked(res Result, text string) {
	if q.errs == nil || len(q.errs) >= maxErrTexts {
		q.errs = map[errKey]string{}
	}
	q.errs[errKey{res.Outcome, uint16(min(res.StatusCode, 65535))}] = text
}

// errorOfLocked returns why it's last attempt failed, "" when none did.
func (q *queue) errorOfLocked(it *item) string {
	switch it.outcome {
	case OutcomeNone, OutcomeDelivered, OutcomeProbation:
		return ""
	}
	if text, ok := q.errs[errKey{it.outcome, it.status}]; ok {
		return text
	}
	return it.outcome.String()
}

// noteOutcomesLocked notes, for those watching, the outcome of items, which
// ended an attempt together.
func (q *queue) noteOutcomesLocked(b *taken, outcome string, items []item) {
	if !q.rec.Watching() {
		return
	}
	b.rec = q.rec
	for i := range items {
		b.outs = append(b.outs, outNote{outcome: outcome, body: items[i].body, attempt: items[i].attempts})
	}
}

// noteRetryLocked notes, for those watching, that it failed and is tried
// again at next.
func (q *queue) noteRetryLocked(b *taken, it *item, next time.Time) {
	if !q.rec.Watching() {
		return
	}
	b.rec = q.rec
	b.outs = append(b.outs, outNote{outcome: inspect.OutcomeFailed, body: it.body, attempt: it.attempts, next: next})
}

// noteGivenUpLocked notes that the queue gave up on it, for the given-up
// list (whoever watches or not).
func (q *queue) noteGivenUpLocked(b *taken, it *item, reason DropReason, kept bool, now time.Time) {
	if q.rec == nil {
		return
	}
	b.rec = q.rec
	b.gaveUp = append(b.gaveUp, inspect.GivenUp{
		Time: now, DeadLettered: kept, Reason: deadLetterReason(reason, it.outcome), Attempts: int(it.attempts),
		LastError: q.errorOfLocked(it), LastStatus: int(it.status), Body: it.body,
	})
}

// report hands the batch's outcomes and given-up events to the record.
func (b *taken) report() {
	if b.rec == nil {
		return
	}
	for _, o := range b.outs {
		out := inspect.Outcome{Outcome: o.outcome, Body: o.body, Time: b.ended, Attempt: int(o.attempt),
			Latency: b.took, Next: o.next}
		if o.outcome == inspect.OutcomeFailed {
			out.StatusCode, out.Error = b.status, b.errText
		}
		b.rec.Report(out)
	}
	for _, g := range b.gaveUp {
		b.rec.GaveUp(g)
	}
	clear(b.outs)
	clear(b.gaveUp)
	b.outs, b.gaveUp, b.rec = b.outs[:0], b.gaveUp[:0], nil
}

// Peek returns a bounded copy of the top oldest events sub's queue holds
// (by when the broker accepted them), ready, in back-off or in flight, and
// how many it holds; ok is false when the engine has no queue for sub. The
// events stay as they were: nothing is taken, locked or reordered. Their
// bodies are shared with the queue and must not be modified.
func (e *Engine) Peek(sub *eventgrid.EventSubscription, top int) (p inspect.Peek, ok bool) {
	q := e.queueOf(sub)
	if q == nil {
		return p, false
	}
	pick := inspect.NewOldest(top)
	q.mu.Lock()
	q.eachLocked(func(it *item, where string) {
		p.Total++
		if pick.Wants(it.s.Accepted) {
			pick.Add(q.waitingLocked(it, where))
		}
	})
	q.mu.Unlock()
	p.Events = pick.Sorted()
	return p, true
}

// RetryNow makes every event of sub that waits in back-off, on the
// CloudExponential schedule or for the end of a probation ready at once,
// keeping its attempts, and ends the probation. It returns how many events
// it made ready; ok is false when the engine has no queue for sub.
func (e *Engine) RetryNow(sub *eventgrid.EventSubscription) (moved int, ok bool) {
	q := e.queueOf(sub)
	if q == nil {
		return 0, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, true
	}
	ready := func(it item) {
		if it.attempts == 0 && it.outcome == OutcomeProbation {
			it.outcome = OutcomeNone
		}
		it.due = 0
		q.ready.push(it)
		moved++
	}
	for i := range q.backoff {
		q.backoff[i].clear(ready)
	}
	for q.timed.len() > 0 {
		ready(q.timed.pop())
	}
	q.probation = 0
	q.scheduleLocked()
	return moved, true
}

// Status returns what sub's queue holds now, in the terms both delivery
// modes share; ok is false when the engine has no queue for sub.
func (e *Engine) Status(sub *eventgrid.EventSubscription) (inspect.Status, bool) {
	st, ok := e.QueueStats(sub)
	if !ok {
		return inspect.Status{}, false
	}
	return inspect.Status{
		Ready: st.Ready, Waiting: st.Backoff[0] + st.Backoff[1] + st.Scheduled, InFlight: st.InFlight,
		ConcurrencyLimit: st.ConcurrencyLimit,
		Failures:         st.Failures, LastFailure: st.LastFailure, LastError: st.LastError,
		NextAttempt: st.NextAttempt, Oldest: st.Oldest, ProbationUntil: st.ProbationUntil,
	}, true
}

func (e *Engine) queueOf(sub *eventgrid.EventSubscription) *queue {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.queues[sub.UID]
}

// eachLocked calls fn on every event the queue holds, with where it waits:
// in flight, in back-off, scheduled, then ready, so that a peek lists the
// events of one request (accepted at the same time) roughly in the order
// they were in it.
func (q *queue) eachLocked(fn func(it *item, where string)) {
	for _, b := range q.flying {
		for i := range b.items {
			fn(&b.items[i], inspect.QueueInFlight)
		}
	}
	q.backoff[0].each(func(it *item) { fn(it, inspect.QueueBackoff1) })
	q.backoff[1].each(func(it *item) { fn(it, inspect.QueueBackoff2) })
	for i := range q.timed.items {
		fn(&q.timed.items[i], inspect.QueueScheduled)
	}
	q.ready.each(func(it *item) { fn(it, inspect.QueueReady) })
}

// oldestLocked returns when the broker accepted the oldest event the queue
// holds; zero when it holds none.
func (q *queue) oldestLocked() time.Time {
	var oldest time.Time
	q.eachLocked(func(it *item, _ string) {
		if oldest.IsZero() || it.s.Accepted.Before(oldest) {
			oldest = it.s.Accepted
		}
	})
	return oldest
}

// nextDueLocked returns when the earliest event waiting to be retried is
// due; zero when none waits.
func (q *queue) nextDueLocked() time.Time {
	next, found := q.earliestDueLocked()
	if !found {
		return time.Time{}
	}
	return q.e.epoch.Add(time.Duration(next))
}

func (q *queue) waitingLocked(it *item, where string) inspect.Waiting {
	w := inspect.Waiting{Body: it.body, Queue: where, Attempts: int(it.attempts), Enqueued: it.s.Accepted,
		LastError: q.errorOfLocked(it)}
	switch where {
	case inspect.QueueBackoff1, inspect.QueueBackoff2, inspect.QueueScheduled:
		w.Next = q.e.epoch.Add(time.Duration(it.due))
	}
	return w
}

// each calls fn on every item, oldest first.
func (d *deque) each(fn func(*item)) {
	i := d.hi
	for c := d.head; c != nil; c = c.next {
		end := chunkLen
		if c == d.tail {
			end = d.ti
		}
		for ; i < end; i++ {
			fn(&c.items[i])
		}
		i = 0
	}
}
