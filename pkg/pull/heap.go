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
