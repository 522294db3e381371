package push

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// What the engine shows the inspection API (docs/console.md): each queue
// answers a peek, a retry now and its status, keeps the texts of recent
// failed attempts, and collects each event's outcome for those watching,
// which the worker reports with the attempt's record (attempt.go).

// errKey is a class of failed attempts: their outcome and HTTP status.
type errKey struct {
	outcome Outcome
	status  uint16
}

// maxErrTexts bounds the error texts a queue keeps by errKey.
const maxErrTexts = 32

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

// noteOutcomesLocked notes, for those watching, that items, which ended an
// attempt together, were delivered.
func (q *queue) noteOutcomesLocked(b *taken, items []item) {
	if !q.out.Watching() {
		return
	}
	for i := range items {
		b.outs = append(b.outs, outcome.Event{Body: items[i].body, Attempt: items[i].attempts})
	}
}

// noteRetryLocked notes, for those watching, that it failed at now and is
// tried again when it is due. Nobody watching, the due time is not turned
// into a wall-clock time.
func (q *queue) noteRetryLocked(b *taken, it *item, now time.Time) {
	if !q.out.Watching() {
		return
	}
	b.outs = append(b.outs, outcome.Event{Body: it.body, Attempt: it.attempts, Failed: true, Error: q.lastError, Next: q.e.wall(it.due, now)})
}

// Peek returns a bounded copy of the top oldest events sub's queue holds
// (by when the broker accepted them, a request's in its order), ready, in
// back-off or in flight, and how many it holds; ok is false when the engine
// has no queue for sub. The events stay as they were: nothing is taken,
// locked or reordered. Their bodies are shared with the queue and must not
// be modified.
func (e *Engine) Peek(sub *eventgrid.EventSubscription, top int) (p inspect.Peek, ok bool) {
	q := e.queueOf(sub)
	if q == nil {
		return p, false
	}
	pick := inspect.NewOldest(top)
	q.mu.Lock()
	now := e.clock.Now()
	q.eachLocked(func(it *item, where string) {
		p.Total++
		if pick.Wants(it.s.Accepted, uint64(it.seq)) {
			pick.Add(q.waitingLocked(it, where, now))
		}
	})
	q.mu.Unlock()
	p.Events = pick.Sorted()
	return p, true
}

// RetryNow makes every event of sub that waits in back-off, on the
// CloudExponential schedule or for the end of a probation ready at once,
// keeping its attempts, and ends the probation. The attempt it forces
// costs the event nothing: should it fail, the event waits again as it did,
// with the same attempts and due at the same time (failedLocked), so that
// an operator who tries whether the endpoint is back never spends an
// event's last attempt (docs/delivery.md#retry-now). It returns how many
// events it made ready, and how many of them were at their last attempt;
// ok is false when the engine has no queue for sub.
func (e *Engine) RetryNow(sub *eventgrid.EventSubscription) (moved, atLast int, ok bool) {
	q := e.queueOf(sub)
	if q == nil {
		return 0, 0, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, 0, true
	}
	ready := func(it item) {
		if it.attempts == 0 && it.outcome == OutcomeProbation {
			it.outcome = OutcomeNone
		}
		if int(it.attempts)+1 >= q.pol.MaxAttempts {
			atLast++
		}
		it.forced = true // it.due keeps when it was due
		q.ready.push(it)
		moved++
	}
	q.takeWaitingLocked(ready)
	q.probation = 0
	q.watchExpiryLocked(e.clock.Now())
	q.scheduleLocked()
	return moved, atLast, true
}

// waitAgainLocked puts it, whose forced attempt failed at now, back to
// wait as it did before retry now made it ready: its attempt does not
// count, and it is due when it was, on the schedule's heap, which keeps
// any due time in order (the back-off lists keep theirs by appending).
func (q *queue) waitAgainLocked(it item, b *taken, now time.Time) {
	it.forced = false
	it.attempts--
	q.noteRetryLocked(b, &it, now)
	q.timed.push(it)
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
		PausedSince: st.PausedSince,
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
		it := &q.timed.items[i]
		fn(it, q.timedWhereLocked(it))
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

// timedWhereLocked names where it, on the schedule's heap, waits: on the
// CloudExponential schedule, or, for an EdgeQueues subscription (an event
// whose forced attempt failed waits there, see waitAgainLocked), in the
// back-off list its attempts give.
func (q *queue) timedWhereLocked(it *item) string {
	switch {
	case q.pol.Schedule == eventgrid.CloudExponential || it.outcome == OutcomeProbation:
		return inspect.QueueScheduled
	case it.attempts <= 1:
		return inspect.QueueBackoff1
	}
	return inspect.QueueBackoff2
}

// nextDueLocked returns when the earliest event waiting to be retried is
// due, as a clock read at now shows it; zero when none waits.
func (q *queue) nextDueLocked(now time.Time) time.Time {
	var next int64
	found := false
	for i := range q.backoff {
		if l := &q.backoff[i]; l.len() > 0 && (!found || l.front().due < next) {
			next, found = l.front().due, true
		}
	}
	if q.timed.len() > 0 && (!found || q.timed.min().due < next) {
		next, found = q.timed.min().due, true
	}
	if !found {
		return time.Time{}
	}
	return q.e.wall(next, now)
}

func (q *queue) waitingLocked(it *item, where string, now time.Time) inspect.Waiting {
	w := inspect.Waiting{Body: it.body, Queue: where, Attempts: int(it.attempts), MaxAttempts: q.pol.MaxAttempts,
		Seq: uint64(it.seq), Enqueued: it.s.Accepted, LastError: q.errorOfLocked(it)}
	switch where {
	case inspect.QueueBackoff1, inspect.QueueBackoff2, inspect.QueueScheduled:
		w.Next = q.e.wall(it.due, now)
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
