package pull

import "time"

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
// position in the heap, so it can be removed. It is the binary heap of
// container/heap, item for item (so its order, which a peek shows, is the
// same), without its interface calls.
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

func (h *timeHeap) less(i, j int) bool { return h.items[i].at.Before(h.items[j].at) }

func (h *timeHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	*h.index(h.items[i].e) = i
	*h.index(h.items[j].e) = j
}

func (h *timeHeap) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h *timeHeap) down(i0, n int) bool {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && h.less(j2, j1) {
			j = j2 // right child
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

func (h *timeHeap) add(e *entry) {
	*h.index(e) = len(h.items)
	h.items = append(h.items, heapItem{at: h.at(e), e: e})
	h.up(len(h.items) - 1)
}

func (h *timeHeap) remove(e *entry) {
	i := *h.index(e)
	if i < 0 {
		return
	}
	n := len(h.items) - 1
	if n != i {
		h.swap(i, n)
		if !h.down(i, n) {
			h.up(i)
		}
	}
	h.items[n] = heapItem{}
	h.items = h.items[:n]
	*h.index(e) = -1
}

// fix restores the order after e's time changed.
func (h *timeHeap) fix(e *entry) {
	i := *h.index(e)
	h.items[i].at = h.at(e)
	if !h.down(i, len(h.items)) {
		h.up(i)
	}
}

// first returns the earliest entry, or nil.
func (h *timeHeap) first() *entry {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0].e
}
