package queue

import (
	"container/heap"
	"math/rand/v2"
	"slices"
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

// TestTTLIndex_FirstIsEarliest: through random adds (mostly in expiry
// order, as published, some earlier, as released), removes from anywhere
// and entries coming back, first is always an entry that expires within
// orderSlack of the earliest among those in the index, and the list holds
// no more places than adds.
func TestTTLIndex_FirstIsEarliest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	x := newTTLIndex()
	var in, out []*entry
	clock := 0
	for step := range 50000 {
		switch op := rng.IntN(20); {
		case op < 8 || len(in) == 0: // published: in order, sometimes behind, within orderSlack or further
			clock += rng.IntN(3)
			behind := []int{0, 0, 0, 1, 2, 90, 150, 1000}[rng.IntN(8)]
			e := &entry{published: t0, expires: t0.Add(time.Duration(clock-behind) * time.Millisecond), lockIdx: -1, delayIdx: -1, ttlIdx: -1}
			x.addQueued(e)
			in = append(in, e)
		case op < 10 && len(out) > 0: // an entry comes back, expiring as before, queued or delayed
			k := rng.IntN(len(out))
			e := out[k]
			out = append(out[:k], out[k+1:]...)
			if op == 8 {
				x.addQueued(e)
			} else {
				x.add(e)
			}
			in = append(in, e)
		case op < 16: // taken first, as receive does
			e := x.first()
			x.remove(e)
			in = slices.Delete(in, slices.Index(in, e), slices.Index(in, e)+1)
			out = append(out, e)
		default: // taken from anywhere
			k := rng.IntN(len(in))
			e := in[k]
			x.remove(e)
			in = append(in[:k], in[k+1:]...)
			out = append(out, e)
		}
		var want *entry
		for _, e := range in {
			if want == nil || e.expires.Before(want.expires) {
				want = e
			}
		}
		got := x.first()
		if (got == nil) != (want == nil) || got != nil && (got.expires.After(want.expires.Add(orderSlack)) || !slices.Contains(in, got)) {
			t.Fatalf("step %d: first = %v, want an entry expiring by %v", step, got, want.expires.Add(orderSlack))
		}
		if n := len(x.order) - x.head + len(x.rest.items); n < len(in) {
			t.Fatalf("step %d: %d places for %d entries", step, n, len(in))
		}
	}
	if len(x.order) > 4*len(in)+2048 {
		t.Errorf("the list kept %d places for %d entries", len(x.order), len(in))
	}
}

// TestTTLIndex_NoPlacesLeftBehind: events flowing through a queue whose
// earliest expiry is a delayed event (one that may wait an hour) leave no
// places behind in the list.
func TestTTLIndex_NoPlacesLeftBehind(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	x := newTTLIndex()
	delayed := &entry{expires: t0, lockIdx: -1, delayIdx: -1, ttlIdx: -1}
	x.add(delayed)
	for i := range 10000 {
		e := &entry{expires: t0.Add(time.Duration(i+1) * time.Second), lockIdx: -1, delayIdx: -1, ttlIdx: -1}
		x.addQueued(e)
		x.remove(e) // received: the head of the available list
		if x.first() != delayed {
			t.Fatalf("event %d: first is not the delayed event", i)
		}
	}
	if n := len(x.order) - x.head; n != 0 {
		t.Errorf("the list holds %d places for no event", n)
	}
}

// TestLockIndex_FirstIsEarliest: through random locks (mostly ending in
// the order taken, some earlier, as after the lock duration was
// shortened, some at the same instant), settlements from anywhere,
// renewals and entries locked again, first is always an entry whose lock
// ends first, each visits every locked entry once, and the list keeps
// few places beyond its entries, even behind a lock that is never settled.
func TestLockIndex_FirstIsEarliest(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	x := newLockIndex()
	stuck := &entry{lockUntil: t0, lockIdx: -1, delayIdx: -1, ttlIdx: -1}
	x.add(stuck) // held at the front throughout
	in := []*entry{stuck}
	var out []*entry
	clock := 0
	for step := range 50000 {
		switch op := rng.IntN(20); {
		case op < 7 || len(in) == 1: // locked: a new event, or one received again
			clock += rng.IntN(2)
			var e *entry
			if len(out) > 0 && op < 3 {
				k := rng.IntN(len(out))
				e = out[k]
				out = append(out[:k], out[k+1:]...)
			} else {
				e = &entry{lockIdx: -1, delayIdx: -1, ttlIdx: -1}
			}
			behind := []int{0, 0, 0, 0, 0, 0, 5, 500}[rng.IntN(8)]
			e.lockUntil = t0.Add(time.Duration(1000+clock-behind) * time.Millisecond)
			x.add(e)
			in = append(in, e)
		case op < 9: // renewed to end later, or at the same time
			k := 1 + rng.IntN(len(in)-1)
			in[k].lockUntil = in[k].lockUntil.Add(time.Duration(rng.IntN(2)) * time.Second)
			x.fix(in[k])
		case op < 13: // the first lock ends
			e := x.first()
			if e == stuck {
				continue
			}
			x.remove(e)
			in = slices.Delete(in, slices.Index(in, e), slices.Index(in, e)+1)
			out = append(out, e)
		default: // settled from anywhere
			k := 1 + rng.IntN(len(in)-1)
			e := in[k]
			x.remove(e)
			in = append(in[:k], in[k+1:]...)
			out = append(out, e)
		}
		want := in[0]
		for _, e := range in {
			if e.lockUntil.Before(want.lockUntil) {
				want = e
			}
		}
		if got := x.first(); got == nil || !got.lockUntil.Equal(want.lockUntil) || !slices.Contains(in, got) {
			t.Fatalf("step %d: first = %v, want one ending at %v", step, got, want.lockUntil)
		}
		if x.Len() != len(in) {
			t.Fatalf("step %d: Len %d, %d locked", step, x.Len(), len(in))
		}
		if step%97 == 0 {
			seen := map[*entry]int{}
			x.each(func(e *entry) { seen[e]++ })
			if len(seen) != len(in) {
				t.Fatalf("step %d: each visited %d entries, %d locked", step, len(seen), len(in))
			}
			for e, n := range seen {
				if n != 1 || !slices.Contains(in, e) {
					t.Fatalf("step %d: each visited an entry %d times (locked: %v)", step, n, slices.Contains(in, e))
				}
			}
		}
		if n := len(x.order) - x.head; n > 2*x.live+1024 {
			t.Fatalf("step %d: the list keeps %d places for %d entries", step, n, x.live)
		}
	}
}
