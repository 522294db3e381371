package queue

import (
	"container/heap"
	"time"
)

// heapKey names the time of an entry a timeHeap orders by, and the field
// in which the entry keeps its position in that heap.
type heapKey uint8

const (
	byLockUntil heapKey = iota // lockUntil, lockIdx
	byReadyAt                  // readyAt, delayIdx
	byExpires                  // expires, ttlIdx
)

// heapItem is an entry in a timeHeap with the time it is ordered by, kept
// beside it so that ordering reads the heap's array only: a queue's heaps
// hold up to all its events, and following each one's pointer to compare
// their times cost a cache miss a step.
type heapItem struct {
	at time.Time
	e  *entry
}

// timeHeap orders entries by one of their times; each entry keeps its
// position in the heap, so it can be removed. container/heap keeps the
// order; the times sit in the heap's own array (heapItem).
type timeHeap struct {
	items []heapItem
	key   heapKey
}

func (h *timeHeap) Len() int { return len(h.items) }

// at returns the time of e that h orders by.
func (h *timeHeap) at(e *entry) time.Time {
	switch h.key {
	case byLockUntil:
		return e.lockUntil
	case byReadyAt:
		return e.readyAt
	}
	return e.expires
}

// index returns e's position field of h.
func (h *timeHeap) index(e *entry) *int {
	switch h.key {
	case byLockUntil:
		return &e.lockIdx
	case byReadyAt:
		return &e.delayIdx
	}
	return &e.ttlIdx
}

func (h *timeHeap) Less(i, j int) bool { return h.items[i].at.Before(h.items[j].at) }

func (h *timeHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	*h.index(h.items[i].e) = i
	*h.index(h.items[j].e) = j
}

// Push and Pop are container/heap's; use add and remove.
func (h *timeHeap) Push(x any) {
	e := x.(*entry)
	*h.index(e) = len(h.items)
	h.items = append(h.items, heapItem{at: h.at(e), e: e})
}

func (h *timeHeap) Pop() any {
	n := len(h.items) - 1
	e := h.items[n].e
	h.items[n] = heapItem{}
	h.items = h.items[:n]
	*h.index(e) = -1
	return e
}

func (h *timeHeap) add(e *entry) { heap.Push(h, e) }

func (h *timeHeap) remove(e *entry) {
	if i := *h.index(e); i >= 0 {
		heap.Remove(h, i)
	}
}

// fix restores the order after e's time changed.
func (h *timeHeap) fix(e *entry) {
	i := *h.index(e)
	h.items[i].at = h.at(e)
	heap.Fix(h, i)
}

// first returns the earliest entry, or nil.
func (h *timeHeap) first() *entry {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0].e
}

// inOrder is the ttlIdx of an entry in a ttlIndex's list.
const inOrder = -2

// ttlIndex orders a queue's available and delayed entries by expiry.
// Available events mostly join the queue in the order they expire in, as
// they are published, so those go to a list in that order, where adding
// one and taking the first cost O(1); the others (an event released while
// later ones wait, a request that reached the queue more than orderSlack
// out of order, a delayed event) go to a heap. A heap alone cost a queue that holds many
// events a walk down it for every event received.
//
// The list holds available entries only, in the available list's order,
// so receiving, which takes that list's head, takes the list's front. An
// entry that leaves it from anywhere else is marked (ttlIdx no longer
// inOrder) and its place dropped when it reaches the front, so the front
// is always an entry in the list. An entry may come back while its old
// place is still there: both places then have its expiry, so the order
// holds either way, within orderSlack.
type ttlIndex struct {
	order []*entry // order[head:], by expires within orderSlack; see above
	head  int
	last  time.Time // the latest expiry that joined the list
	rest  timeHeap  // by expires
}

func newTTLIndex() ttlIndex { return ttlIndex{rest: timeHeap{key: byExpires}} }

// orderSlack is how much earlier than the latest expiry in the list an
// event may expire and still join the list, at most: concurrent publish
// requests reach the queue a little out of the order they were accepted
// in, and a heap for each of them cost what the list saves. An event in the
// list then expires at most that much after its time (see first); a
// receive never takes an expired one, whatever the index says. It is a
// hundredth of the event's time to live when that is shorter.
const orderSlack = 100 * time.Millisecond

// addQueued adds e, which has just joined the tail of the available list.
func (x *ttlIndex) addQueued(e *entry) {
	slack := min(orderSlack, e.expires.Sub(e.published)/100)
	if x.head == len(x.order) || !e.expires.Before(x.last.Add(-slack)) {
		e.ttlIdx = inOrder
		x.order = append(x.order, e)
		if x.head == len(x.order)-1 || e.expires.After(x.last) {
			x.last = e.expires
		}
		return
	}
	x.rest.add(e)
}

// add adds e, which is delayed.
func (x *ttlIndex) add(e *entry) { x.rest.add(e) }

func (x *ttlIndex) remove(e *entry) {
	if e.ttlIdx != inOrder {
		x.rest.remove(e)
		return
	}
	e.ttlIdx = -1
	x.trim()
}

// trim drops the places at the front of the list whose entries left it,
// and reuses or shrinks the list once its front has moved far.
func (x *ttlIndex) trim() {
	for x.head < len(x.order) && x.order[x.head].ttlIdx != inOrder {
		x.order[x.head] = nil
		x.head++
	}
	switch {
	case x.head == len(x.order):
		x.order, x.head = x.order[:0], 0
	case x.head >= 1024 && x.head >= len(x.order)/2:
		n := copy(x.order, x.order[x.head:])
		clear(x.order[n:])
		x.order, x.head = x.order[:n], 0
	}
}

// first returns the entry that expires first, or nil; or one of the list
// that expires at most orderSlack after the first, which is then dealt
// with once that one expires.
func (x *ttlIndex) first() *entry {
	e := x.rest.first()
	if x.head < len(x.order) {
		if f := x.order[x.head]; e == nil || f.expires.Before(e.expires) {
			return f
		}
	}
	return e
}

// reset empties the index; its entries' places are left as they are.
func (x *ttlIndex) reset() { *x = newTTLIndex() }

// lockIndex orders a queue's locked entries by the end of their lock. A
// receive locks its events for the subscription's lock duration from now,
// and a renewal from now too, so locks mostly end in the order they are
// taken: those go to a list in that order, where adding one, taking the
// first and settling one cost O(1); the others (taken after the lock
// duration was shortened) go to a heap. In the heap alone, settling an
// event took a walk through it, a few percent of pull delivery's CPU.
//
// Settling, expiring or renewing a lock leaves its place in the list
// behind: a place counts only while its entry is in the list (lockIdx
// inOrder) under the same lock (lockSeq). Places that no longer count are
// dropped when they reach the front, and the list is compacted once they
// outnumber the live ones, so that a lock held long at the front (by a
// consumer that never settles) does not keep every later place.
type lockIndex struct {
	order []lockPlace // order[head:], by lock end
	head  int
	live  int       // entries in the list
	last  time.Time // the latest lock end that joined the list
	rest  timeHeap  // by lockUntil
}

// lockPlace is an entry's place in a lockIndex's list, under its lock of
// number seq.
type lockPlace struct {
	e   *entry
	seq uint32
}

func (p lockPlace) counts() bool { return p.e.lockIdx == inOrder && p.e.lockSeq == p.seq }

func newLockIndex() lockIndex { return lockIndex{rest: timeHeap{key: byLockUntil}} }

// Len returns how many entries the index holds.
func (x *lockIndex) Len() int { return x.live + x.rest.Len() }

// add adds e, just locked until e.lockUntil.
func (x *lockIndex) add(e *entry) {
	if x.live > 0 && e.lockUntil.Before(x.last) {
		x.rest.add(e)
		return
	}
	e.lockIdx = inOrder
	e.lockSeq++
	x.order = append(x.order, lockPlace{e: e, seq: e.lockSeq})
	x.live++
	x.last = e.lockUntil
}

// remove takes e out, its lock settled or expired.
func (x *lockIndex) remove(e *entry) {
	switch {
	case e.lockIdx == inOrder:
		e.lockIdx = -1
		x.live--
		x.trim()
	case e.lockIdx >= 0:
		x.rest.remove(e)
	}
}

// fix restores the order after e's lock end changed: a renewal.
func (x *lockIndex) fix(e *entry) {
	if e.lockIdx >= 0 {
		x.rest.fix(e)
		return
	}
	x.remove(e) // its place no longer counts; it joins again at its new end
	x.add(e)
}

// trim drops the places at the front that no longer count, and compacts
// the list when most of it no longer does.
func (x *lockIndex) trim() {
	for x.head < len(x.order) && !x.order[x.head].counts() {
		x.order[x.head] = lockPlace{}
		x.head++
	}
	if x.head == len(x.order) {
		x.order, x.head = x.order[:0], 0
		return
	}
	if n := len(x.order) - x.head; n >= 1024 && n > 2*x.live {
		kept := x.order[:0]
		for _, p := range x.order[x.head:] {
			if p.counts() {
				kept = append(kept, p)
			}
		}
		clear(x.order[len(kept):])
		x.order, x.head = kept, 0
	}
}

// first returns the entry whose lock ends first, or nil. The list's front
// always counts while the list has entries: only remove makes it stop
// counting, and remove trims.
func (x *lockIndex) first() *entry {
	e := x.rest.first()
	if x.live > 0 {
		if f := x.order[x.head].e; e == nil || f.lockUntil.Before(e.lockUntil) {
			return f
		}
	}
	return e
}

// each calls fn on every entry of the index.
func (x *lockIndex) each(fn func(*entry)) {
	for _, p := range x.order[x.head:] {
		if p.counts() {
			fn(p.e)
		}
	}
	for _, it := range x.rest.items {
		fn(it.e)
	}
}

// reset empties the index; its entries' places are left as they are.
func (x *lockIndex) reset() { *x = newLockIndex() }
