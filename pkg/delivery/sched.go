package delivery

// schedule puts q in line for a worker, unless it is already. Called with
// q.mu held.
func (e *Engine) schedule(q *queue, slow bool) {
	if q.scheduled.Load() {
		// A worker will take it and see what the caller changed under q.mu,
		// which it locks after clearing the flag.
		return
	}
	e.sched.Lock()
	defer e.sched.Unlock()
	if q.scheduled.Load() || e.stopping {
		return
	}
	q.scheduled.Store(true)
	if slow {
		e.slowq.push(q)
	} else {
		e.runq.push(q)
	}
	e.wake.Signal()
}

// next waits for work: a queue to serve (slow tells from which line, so the
// worker can give its place back) or a discard to run. It returns false
// when the engine stops.
func (e *Engine) next() (q *queue, slow bool, d *discard, ok bool) {
	e.sched.Lock()
	defer e.sched.Unlock()
	for {
		if e.stopping {
			return nil, false, nil, false
		}
		if n := len(e.discards); n > 0 {
			d = e.discards[n-1]
			e.discards[n-1] = nil
			e.discards = e.discards[:n-1]
			return nil, false, d, true
		}
		fast := e.runq.len() > 0
		canSlow := e.slowq.len() > 0 && e.slowBusy < e.slowMax
		if fast && canSlow {
			e.turn = !e.turn
			fast = e.turn
		}
		switch {
		case fast:
			q = e.runq.pop()
		case canSlow:
			q = e.slowq.pop()
			e.slowBusy++
			slow = true
		default:
			e.wake.Wait()
			continue
		}
		q.scheduled.Store(false)
		return q, slow, nil, true
	}
}

// doneSlow gives back a slow-line place.
func (e *Engine) doneSlow() {
	e.sched.Lock()
	e.slowBusy--
	if e.slowq.len() > 0 {
		e.wake.Signal()
	}
	e.sched.Unlock()
}

// work is one worker: it serves queues until the engine stops.
func (e *Engine) work() {
	defer e.wg.Done()
	var b taken // reused for every batch this worker sends
	for {
		q, slow, d, ok := e.next()
		if !ok {
			return
		}
		if d != nil {
			d.run(e)
			continue
		}
		q.serve(&b)
		if slow {
			e.doneSlow()
		}
	}
}

// fifo is a first-in first-out list that reuses its memory.
type fifo[T any] struct {
	items []T
	head  int
}

func (f *fifo[T]) len() int { return len(f.items) - f.head }

func (f *fifo[T]) push(v T) {
	if f.head > 0 && f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	}
	f.items = append(f.items, v)
}

func (f *fifo[T]) pop() T {
	var zero T
	v := f.items[f.head]
	f.items[f.head] = zero
	f.head++
	if f.head > 64 && f.head*2 > len(f.items) {
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	return v
}
