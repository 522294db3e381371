package queue

import (
	"errors"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// What the store shows the inspection API (docs/console.md): each queue
// answers a peek, a retry now and its status, and collects each event's
// outcome for those watching, which apply reports (effects.go).

// Why an event's last receive did not end in an acknowledgement, as the
// inspection API and the logs say it.
var (
	errReleased    = errors.New("released by the receiver")
	errLockExpired = errors.New("the lock expired before the event was settled")
	errRejected    = errors.New("rejected by the receiver")
)

// lastError says why e's last receive failed, "" when there was none.
func (e *entry) lastError() string {
	switch e.outcome {
	case released:
		return errReleased.Error()
	case lockExpired:
		return errLockExpired.Error()
	case rejected:
		return errRejected.Error()
	}
	return ""
}

// noteLocked notes, for those watching, how e's receive ended: delivered,
// or failed with err and tried again at next.
func (q *queue) noteLocked(fx *effects, e *entry, err error, next time.Time) {
	if !q.out.Watching() {
		return
	}
	o := outcome.Event{Body: e.body, Attempt: int32(e.count), Next: next}
	if err != nil {
		o.Failed, o.Error = true, err.Error()
	}
	fx.outs = append(fx.outs, o)
}

// Peek returns a bounded copy of the top oldest events sub's queue holds
// (by when the broker accepted them), available, locked or delayed, and how
// many it holds; ok is false when the store has no queue for sub. Nothing
// is received, locked or reordered. The bodies are shared with the queue
// and must not be modified.
func (s *Store) Peek(sub *eventgrid.EventSubscription, top int) (p inspect.Peek, ok bool) {
	q := s.lookup(sub)
	if q == nil {
		return p, false
	}
	pick := inspect.NewOldest(top)
	q.mu.Lock()
	q.eachLocked(func(e *entry) {
		p.Total++
		if pick.Wants(e.published, e.seq) {
			pick.Add(q.waitingLocked(e))
		}
	})
	q.mu.Unlock()
	p.Events = pick.Sorted()
	return p, true
}

func (q *queue) waitingLocked(e *entry) inspect.Waiting {
	w := inspect.Waiting{Body: e.body, Attempts: e.count, MaxAttempts: q.sub.Queue.MaxDeliveryCount, Seq: e.seq,
		Enqueued: e.published, LastError: e.lastError()}
	switch e.state {
	case available:
		w.Queue = inspect.QueueAvailable
	case locked:
		w.Queue, w.Next = inspect.QueueLocked, e.lockUntil
	case delayed:
		w.Queue, w.Next = inspect.QueueDelayed, e.readyAt
	}
	return w
}

// RetryNow makes sub's delayed events available at once. It returns how
// many it moved, and how many of them the next receive would take to their
// last delivery (maxDeliveryCount); ok is false when the store has no queue
// for sub. It spends no delivery: only a receive does, when it comes, as
// it would have once the delays passed.
func (s *Store) RetryNow(sub *eventgrid.EventSubscription) (moved, atLast int, ok bool) {
	q := s.lookup(sub)
	if q == nil {
		return 0, 0, false
	}
	var fx effects
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return 0, 0, true
	}
	now := q.s.opts.Clock.Now()
	q.expireLocked(now, &fx) // what is past its time to live goes first
	for e := q.delays.first(); e != nil; e = q.delays.first() {
		q.delays.remove(e)
		q.ttl.remove(e)
		q.pushBackLocked(e)
		moved++
		if e.count+1 >= q.sub.Queue.MaxDeliveryCount {
			atLast++
		}
	}
	q.armLocked(now)
	q.wakeLocked()
	sub = q.sub
	q.mu.Unlock()
	q.apply(sub, now, &fx)
	return moved, atLast, true
}

// Status returns what sub's queue holds now, in the terms both delivery
// modes share: available events are Ready, delayed ones Waiting (until
// NextAttempt, the earliest delay's end) and locked ones InFlight, with the
// receives waiting and when the last came; ok is false if sub has no
// queue.
func (s *Store) Status(sub *eventgrid.EventSubscription) (inspect.Status, bool) {
	q := s.lookup(sub)
	if q == nil {
		return inspect.Status{}, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.countsLocked()
	st := inspect.Status{Ready: c.Available, Waiting: c.Delayed, InFlight: c.Locked,
		PausedSince: q.pausedSince, ReceiversWaiting: c.Waiting, LastReceive: q.lastReceive, Taken: s.opts.Clock.Now()}
	q.eachLocked(func(e *entry) {
		if st.Oldest.IsZero() || e.published.Before(st.Oldest) {
			st.Oldest = e.published
		}
	})
	if e := q.delays.first(); e != nil {
		st.NextAttempt = e.readyAt
	}
	return st, true
}

func (s *Store) lookup(sub *eventgrid.EventSubscription) *queue {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.queues[sub.UID]
}

// eachLocked calls fn on every event the queue holds: locked, delayed,
// then available ones, so that a peek lists the events of one request
// (accepted at the same time) roughly in the order they were in it.
func (q *queue) eachLocked(fn func(*entry)) {
	q.locks.each(fn)
	for _, it := range q.delays.items {
		fn(it.e)
	}
	for e := q.head; e != nil; e = e.next {
		fn(e)
	}
}
