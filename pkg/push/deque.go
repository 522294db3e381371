package push

import "sync"

// chunkLen is the number of items in one deque chunk: big enough that chunk
// overhead is small, small enough that an idle subscription's partial chunks
// cost little.
const chunkLen = 64

// chunk is a piece of a deque.
type chunk struct {
	items [chunkLen]item
	next  *chunk
}

// chunkPool holds freed chunks for the next backlog.
var chunkPool = sync.Pool{New: func() any { return new(chunk) }}

// deque is a FIFO queue of items kept as a linked list of fixed-size chunks.
// Unlike a growing ring buffer it never copies its items and never holds
// more than two partly used chunks, so a backlog costs little beyond the
// items themselves, and draining it frees memory as it goes. The zero value
// is empty and ready to use; it is not safe for concurrent use.
type deque struct {
	head, tail *chunk
	hi, ti     int // index of the first item in head, and after the last in tail
	size       int
}

func (d *deque) len() int { return d.size }

func (d *deque) push(v item) {
	if d.tail == nil || d.ti == chunkLen {
		c := chunkPool.Get().(*chunk)
		if d.tail == nil {
			d.head, d.hi = c, 0
		} else {
			d.tail.next = c
		}
		d.tail, d.ti = c, 0
	}
	d.tail.items[d.ti] = v
	d.ti++
	d.size++
}

// front returns the oldest item; the deque must not be empty.
func (d *deque) front() *item { return &d.head.items[d.hi] }

// pop removes and returns the oldest item; the deque must not be empty.
func (d *deque) pop() item {
	c := d.head
	v := c.items[d.hi]
	c.items[d.hi] = item{} // let the garbage collector have what it points to
	d.hi++
	d.size--
	switch {
	case d.size == 0:
		release(c)
		d.head, d.tail, d.hi, d.ti = nil, nil, 0, 0
	case d.hi == chunkLen:
		d.head, d.hi = c.next, 0
		release(c)
	}
	return v
}

func release(c *chunk) {
	c.next = nil
	chunkPool.Put(c)
}

// clear empties the deque, calling fn on every item first.
func (d *deque) clear(fn func(item)) {
	for d.size > 0 {
		fn(d.pop())
	}
}

// heap is a min-heap of items by due time, for the CloudExponential
// schedule, whose delays vary by event. The zero value is empty.
type heap struct {
	items []item
}

func (h *heap) len() int { return len(h.items) }

// min returns the item due first; the heap must not be empty.
func (h *heap) min() *item { return &h.items[0] }

func (h *heap) push(v item) {
	h.items = append(h.items, v)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.items[p].due <= h.items[i].due {
			break
		}
		h.items[p], h.items[i] = h.items[i], h.items[p]
		i = p
	}
}

// pop removes and returns the item due first; the heap must not be empty.
func (h *heap) pop() item {
	n := len(h.items) - 1
	v := h.items[0]
	h.items[0] = h.items[n]
	h.items[n] = item{}
	h.items = h.items[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.items[l].due < h.items[m].due {
			m = l
		}
		if r < n && h.items[r].due < h.items[m].due {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	if n == 0 {
		h.items = nil // an emptied heap gives its memory back
	}
	return v
}
