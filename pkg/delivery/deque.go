package delivery

// deque is a FIFO ring buffer. The zero value is empty and ready to use.
type deque[T any] struct {
	buf        []T
	head, size int
}

func (d *deque[T]) len() int { return d.size }

func (d *deque[T]) push(v T) {
	if d.size == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.size)%len(d.buf)] = v
	d.size++
}

// front returns the oldest element; the deque must not be empty.
func (d *deque[T]) front() *T { return &d.buf[d.head] }

// pop removes and returns the oldest element; the deque must not be empty.
func (d *deque[T]) pop() T {
	var zero T
	v := d.buf[d.head]
	d.buf[d.head] = zero // let the garbage collector have it
	d.head = (d.head + 1) % len(d.buf)
	d.size--
	if d.size == 0 {
		d.head = 0
		if len(d.buf) > 1024 { // release the memory of a drained backlog
			d.buf = nil
		}
	}
	return v
}

func (d *deque[T]) grow() {
	n := max(16, 2*len(d.buf))
	buf := make([]T, n)
	for i := 0; i < d.size; i++ {
		buf[i] = d.buf[(d.head+i)%len(d.buf)]
	}
	d.buf, d.head = buf, 0
}

// clear empties the deque, calling fn on every element first.
func (d *deque[T]) clear(fn func(T)) {
	for d.size > 0 {
		fn(d.pop())
	}
	d.buf = nil
}
