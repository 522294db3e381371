package pull

import (
	"container/heap"
	"time"
)

// timeHeap orders entries by one of their times; each entry keeps its
// position in the heap in one of its index fields, so it can be removed.
type timeHeap struct {
	items []*entry
	at    func(*entry) time.Time
	index func(*entry) *int
}

func (h *timeHeap) Len() int           { return len(h.items) }
func (h *timeHeap) Less(i, j int) bool { return h.at(h.items[i]).Before(h.at(h.items[j])) }
func (h *timeHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	*h.index(h.items[i]) = i
	*h.index(h.items[j]) = j
}
func (h *timeHeap) Push(x any) {
	e := x.(*entry)
	*h.index(e) = len(h.items)
	h.items = append(h.items, e)
}
func (h *timeHeap) Pop() any {
	n := len(h.items) - 1
	e := h.items[n]
	h.items[n] = nil
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

func (h *timeHeap) fix(e *entry) { heap.Fix(h, *h.index(e)) }

// first returns the earliest entry, or nil.
func (h *timeHeap) first() *entry {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}
