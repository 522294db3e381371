package delivery

import "sync"

// chunkLen is the number of items in one deque chunk: big enough that chunk
// overhead is small, small enough that an idle subscription's partial chunks
// cost little.
const chunkLen = 64

// chunk is a piece of a deque.
type chunk[T any] struct {
	items [chunkLen]T
	next  *chunk[T]
}

// deque is a FIFO queue kept as a linked list of fixed-size chunks. Unlike a
// growing ring buffer it never copies its items and never holds more than
// two partly used chunks, so a backlog costs little beyond the items
// themselves, and draining it frees memory as it goes. The zero value is
// empty and ready to use; it is not safe for concurrent use.
type deque[T any] struct {
	head, tail *chunk[T]
	hi, ti     int // index of the first item in head, and after the last in tail
	size       int
}

// chunkPools holds freed chunks, one pool per item type in use.
var chunkPools sync.Map // map[*T]*sync.Pool, keyed by a typed nil pointer

func chunkPool[T any]() *sync.Pool {
	var key *T
	if p, ok := chunkPools.Load(key); ok {
		return p.(*sync.Pool)
	}
	p, _ := chunkPools.LoadOrStore(key, &sync.Pool{New: func() any { return new(chunk[T]) }})
	return p.(*sync.Pool)
}

func (d *deque[T]) len() int { return d.size }

func (d *deque[T]) push(v T) {
	if d.tail == nil || d.ti == chunkLen {
		c := chunkPool[T]().Get().(*chunk[T])
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
func (d *deque[T]) front() *T { return &d.head.items[d.hi] }

// pop removes and returns the oldest item; the deque must not be empty.
func (d *deque[T]) pop() T {
	var zero T
	c := d.head
	v := c.items[d.hi]
	c.items[d.hi] = zero // let the garbage collector have what it points to
	d.hi++
	d.size--
	switch {
	case d.size == 0:
		d.release(c)
		d.head, d.tail, d.hi, d.ti = nil, nil, 0, 0
	case d.hi == chunkLen:
		d.head, d.hi = c.next, 0
		d.release(c)
	}
	return v
}

func (d *deque[T]) release(c *chunk[T]) {
	c.next = nil
	chunkPool[T]().Put(c)
}

// clear empties the deque, calling fn on every item first.
func (d *deque[T]) clear(fn func(T)) {
	for d.size > 0 {
		fn(d.pop())
	}
}
