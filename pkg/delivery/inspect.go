package delivery

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

// noteRetryLocked notes, for those watching, that it failed and is tried
// again at next.
func (q *queue) noteRetryLocked(b *taken, it *item, next time.Time) {
	if !q.out.Watching() {
		return
	}
	b.outs = append(b.outs, outcome.Event{Body: it.body, Attempt: it.attempts, Failed: true, Error: q.lastError, Next: next})
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
