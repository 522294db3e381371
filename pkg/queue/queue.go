package queue

import (
	"container/list"
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
)

type state uint8

const (
	available state = iota
	locked
	delayed
	gone
)

// ending is how an event's last receive ended, as its dead letter says
// (lastDeliveryOutcome).
type ending uint8

const (
	neverReceived ending = iota
	released             // the receiver released it
	lockExpired          // its lock expired unsettled
	rejected             // the receiver rejected it
)

// The lastDeliveryOutcome values of a queue subscription's dead letters.
const (
	OutcomeNeverReceived = "NeverReceived"
	OutcomeReleased      = "Released"
	OutcomeLockExpired   = "LockExpired"
	OutcomeRejected      = "Rejected"
)

var outcomeNames = [...]string{neverReceived: OutcomeNeverReceived, released: OutcomeReleased, lockExpired: OutcomeLockExpired, rejected: OutcomeRejected}

func (o ending) String() string { return outcomeNames[o] }

// entry is one event in one queue subscription.
type entry struct {
	body      []byte
	hold      *budget.Hold // the request it came in
	published time.Time
	expires   time.Time // published + the time to live
	seq       uint64    // its number in the queue, rising as events are queued
	count     int       // deliveries so far
	state     state
	outcome   ending // how the last receive ended
	lockSeq   uint32 // the number of its lock (lockIndex)

	token     string
	lockedAt  time.Time
	lockUntil time.Time
	readyAt   time.Time // of a delayed release

	prev, next *entry // in the available list

	lockIdx, delayIdx, ttlIdx int
}

// queue is one queue subscription's events.
//
// An entry is in exactly one place: the available list (and the TTL index),
// the delayed heap (and the TTL index), or the locked heap (and the token
// map). Its state says which.
type queue struct {
	s     *Store
	share budget.Share // the subscription's part of the broker's budget

	mu      sync.Mutex
	sub     *eventgrid.EventSubscription
	head    *entry
	tail    *entry
	nAvail  int
	tokens  map[string]*entry
	locks   lockIndex // by lockUntil
	delays  timeHeap  // by readyAt
	ttl     ttlIndex  // by expires; available and delayed entries only
	waiting list.List // of *waiter: receives waiting for events, oldest first
	woken   int       // receives woken for an event, not yet back
	timer   clock.Timer
	timerAt time.Time
	closed  bool
	// closeReason is why the queue was closed.
	closeReason outcome.Reason
	// out reports the subscription's records (package outcome).
	out *outcome.Sub
	// seq is the number of the last event queued (entry.seq).
	seq uint64
	// pausedSince, when not zero, is when the subscription was paused
	// (pause.go): receives hand out nothing. lastReceive is when the last
	// receive came.
	pausedSince time.Time
	lastReceive time.Time
}

func newQueue(s *Store, sub *eventgrid.EventSubscription) *queue {
	q := &queue{
		s:      s,
		sub:    sub,
		tokens: map[string]*entry{},
		out:    s.rep.For(sub),
	}
	q.locks = newLockIndex()
	q.delays = timeHeap{key: byReadyAt}
	q.ttl = newTTLIndex()
	return q
}

func (q *queue) countsLocked() Counts {
	return Counts{Available: q.nAvail, Locked: q.locks.Len(), Delayed: q.delays.Len(), Waiting: q.waiting.Len() + q.woken,
		Paused: !q.pausedSince.IsZero()}
}

func (q *queue) lockDuration() time.Duration {
	return q.s.scale(time.Duration(q.sub.Queue.ReceiveLockSeconds) * time.Second)
}

// release returns e, which has left the queue, to the budget and the
// subscription's share. It is atomics only: it runs with the queue's lock held
// or not.
func (q *queue) release(e *entry) {
	e.hold.Release(&q.share, int64(len(e.body)))
}

// acknowledged returns e, acknowledged at now, to the budget and the
// subscription's share: the room publish requests held for room wait for
// (see budget.Budget.ReserveWithin).
func (q *queue) acknowledged(e *entry, now time.Time) {
	e.hold.Delivered(&q.share, int64(len(e.body)), now)
}

// finishLocked gives up on e, which is in no list, heap or map any more,
// at now, for reason: it is dead-lettered when the subscription has a
// destination for that, and dropped otherwise.
func (q *queue) finishLocked(e *entry, reason outcome.Reason, now time.Time, fx *effects) {
	e.state = gone
	kept := q.sub.DeadLetter != nil && q.s.rep.DeadLetters()
	rec := outcome.Record{Kind: outcome.GaveUp, Sub: q.sub, Time: now, Reason: reason, Body: e.body,
		Attempt: e.count, LastOutcome: e.outcome.String(), LastError: e.lastError(), LastAttempt: e.lockedAt,
		Published: e.published, DeadLettered: kept}
	if kept {
		var once sync.Once
		rec.Done = func() { once.Do(func() { q.release(e) }) }
	} else {
		q.release(e)
	}
	fx.gaveUp = append(fx.gaveUp, rec)
}

func (q *queue) pushBackLocked(e *entry) {
	e.state = available
	e.prev, e.next = q.tail, nil
	if q.tail != nil {
		q.tail.next = e
	} else {
		q.head = e
	}
	q.tail = e
	q.nAvail++
	q.ttl.addQueued(e)
}

func (q *queue) unlinkLocked(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		q.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		q.tail = e.prev
	}
	e.prev, e.next = nil, nil
	q.nAvail--
	q.ttl.remove(e)
}

// unlockLocked ends e's lock (released or expired): it is dead-lettered
// past its delivery count or time to live, and otherwise available again
// now or after delay.
func (q *queue) unlockLocked(e *entry, now time.Time, delay time.Duration, fx *effects) {
	q.locks.remove(e)
	delete(q.tokens, e.token)
	e.token = ""
	switch {
	case e.count >= q.sub.Queue.MaxDeliveryCount:
		q.finishLocked(e, outcome.MaxDeliveryCountExceeded, now, fx)
	case !now.Before(e.expires):
		q.finishLocked(e, outcome.TimeToLiveExceeded, now, fx)
	case delay > 0:
		e.state = delayed
		e.readyAt = now.Add(delay)
		q.delays.add(e)
		q.ttl.add(e)
	default:
		q.pushBackLocked(e)
	}
}

// close drops the queue's events, counted with reason, and ends its
// waiting receives.
func (q *queue) close(reason outcome.Reason) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.closeReason = reason
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	n := q.nAvail + q.locks.Len() + q.delays.Len()
	for e := q.head; e != nil; e = e.next {
		q.release(e)
	}
	q.locks.each(q.release)
	for _, it := range q.delays.items {
		q.release(it.e)
	}
	q.head, q.tail, q.nAvail = nil, nil, 0
	q.tokens = map[string]*entry{}
	q.locks.reset()
	q.delays.items = nil
	q.ttl.reset()
	q.wakeAllLocked()
	sub := q.sub
	q.mu.Unlock()
	q.out.Report(&outcome.Record{Kind: outcome.Discarded, Sub: sub, Time: q.s.opts.Clock.Now(), Reason: reason, Events: n})
	q.out.Close()
}
