package pull

import (
	"container/heap"
	"math/rand/v2"
	"testing"
	"time"
)

// refHeap is container/heap over entries by lockUntil, the order timeHeap
// must keep item for item.
type refHeap []*entry

func (h refHeap) Len() int           { return len(h) }
func (h refHeap) Less(i, j int) bool { return h[i].lockUntil.Before(h[j].lockUntil) }
func (h refHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].delayIdx, h[j].delayIdx = i, j
}
func (h *refHeap) Push(x any) { e := x.(*entry); e.delayIdx = len(*h); *h = append(*h, e) }
func (h *refHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	e.delayIdx = -1
	return e
}

// TestTimeHeap_SameOrderAsContainerHeap: random adds, removes and fixes
// leave timeHeap's items in container/heap's order, with every entry's
// position right.
func TestTimeHeap_SameOrderAsContainerHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := timeHeap{key: byLockUntil}
	var ref refHeap
	var in []*entry
	for step := range 20000 {
		switch op := rng.IntN(10); {
		case op < 5 || len(in) == 0:
			e := &entry{lockUntil: t0.Add(time.Duration(rng.IntN(1000)) * time.Second), lockIdx: -1, delayIdx: -1}
			h.add(e)
			heap.Push(&ref, e)
			in = append(in, e)
		case op < 8:
			k := rng.IntN(len(in))
			e := in[k]
			in = append(in[:k], in[k+1:]...)
			heap.Remove(&ref, e.delayIdx)
			h.remove(e)
		default:
			e := in[rng.IntN(len(in))]
			e.lockUntil = t0.Add(time.Duration(rng.IntN(1000)) * time.Second)
			heap.Fix(&ref, e.delayIdx)
			h.fix(e)
		}
		if len(h.items) != len(ref) {
			t.Fatalf("step %d: %d items, want %d", step, len(h.items), len(ref))
		}
		for i, it := range h.items {
			if it.e != ref[i] || it.e.lockIdx != i || !it.at.Equal(it.e.lockUntil) {
				t.Fatalf("step %d: item %d differs from container/heap's", step, i)
			}
		}
	}
}
