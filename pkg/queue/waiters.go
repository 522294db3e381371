package queue

import (
	"container/list"
	"sync/atomic"
)

// waiter is one receive waiting for events. Under the queue's lock it is in
// one of three places: in the queue's waiting list, woken (told that an
// event is there for it, and not yet back under the lock), or neither.
type waiter struct {
	ch      chan struct{}
	expired atomic.Bool // its maxWaitTime has passed

	elem  *list.Element // in the waiting list, or nil
	woken bool
}

func newWaiter() *waiter { return &waiter{ch: make(chan struct{}, 1)} }

// signal makes the waiter's receive look at the queue again.
func (w *waiter) signal() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// joinLocked puts w in the waiting list: at the front when it was woken for
// an event that another receive took first, so that it keeps its turn, and
// at the back otherwise.
func (q *queue) joinLocked(w *waiter, wasWoken bool) {
	if wasWoken {
		w.elem = q.waiting.PushFront(w)
	} else {
		w.elem = q.waiting.PushBack(w)
	}
}

// leaveLocked takes w out of the waiting list, or out of the woken ones,
// and reports whether it had been woken.
func (q *queue) leaveLocked(w *waiter) (wasWoken bool) {
	switch {
	case w.woken:
		w.woken = false
		q.woken--
		return true
	case w.elem != nil:
		q.waiting.Remove(w.elem)
		w.elem = nil
	}
	return false
}

// wakeLocked wakes one waiting receive per available event that no woken
// receive is already coming for, oldest waiter first. Every change that can
// make events available, or take a woken receive away, ends with it, so
// that no event sits available while a receive waits, and a publish wakes
// one receive, not all of them. While the subscription is paused it wakes
// none; resuming wakes them.
func (q *queue) wakeLocked() {
	if !q.pausedSince.IsZero() {
		return // nothing is handed out: the receives wait on
	}
	for q.nAvail > q.woken && q.waiting.Len() > 0 {
		w := q.waiting.Remove(q.waiting.Front()).(*waiter)
		w.elem = nil
		w.woken = true
		q.woken++
		w.signal()
	}
}

// wakeAllLocked makes every waiting receive look at the queue again: it is
// closing.
func (q *queue) wakeAllLocked() {
	for e := q.waiting.Front(); e != nil; e = e.Next() {
		e.Value.(*waiter).signal()
	}
}
