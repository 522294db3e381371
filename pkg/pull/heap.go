package pull

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
