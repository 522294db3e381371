package schema

import "github.com/edgegrid/edgegrid/pkg/eventgrid"

// arena hands out the memory of one request's events: their bodies are cut
// from shared blocks and their Event structs from shared arrays, so that a
// batch of a hundred events costs a handful of allocations instead of two
// hundred, with no per-event rounding up to an allocation size class. What
// is cut from one arena stays alive while any of it is referenced; the
// delivery engine accounts for a request's bytes until all of its events
// are gone, which matches.
type arena struct {
	block  []byte            // the current block; bodies are cut from its spare capacity
	next   int               // size of the next block
	events []eventgrid.Event // the current array; Events are taken from its spare capacity
}

// newArena returns an arena whose first block has room for size bytes.
func newArena(size int) *arena {
	return &arena{next: max(size, 512)}
}

// body returns an empty slice with capacity n, cut from the current block
// or from a new one. Callers append at most n bytes to it.
func (a *arena) body(n int) []byte {
	if cap(a.block)-len(a.block) < n {
		size := max(n, a.next)
		a.block = make([]byte, 0, size)
		a.next = max(size/2, 4096) // later blocks only hold what the estimate missed
	}
	start := len(a.block)
	a.block = a.block[:start+n]
	return a.block[start : start : start+n]
}

// event returns a zeroed Event from the current array or a new, larger one.
func (a *arena) event() *eventgrid.Event {
	if len(a.events) == cap(a.events) {
		a.events = make([]eventgrid.Event, 0, min(max(2*cap(a.events), 8), 256))
	}
	a.events = a.events[:len(a.events)+1]
	return &a.events[len(a.events)-1]
}
