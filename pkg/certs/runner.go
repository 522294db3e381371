package certs

import (
	"context"
	"sync"
	"time"
)

// runner gives a background loop an owner: run executes the loop at most
// once, until ctx is done or close is called; close stops the loop and
// waits for it to return.
type runner struct {
	mu      sync.Mutex
	started bool
	stopped bool
	stop    chan struct{}
	done    chan struct{}
}

func newRunner() *runner {
	return &runner{stop: make(chan struct{}), done: make(chan struct{})}
}

// run calls loop with a context that ends when ctx is done or close is
// called. It returns at once if the loop already ran or close was called.
func (r *runner) run(ctx context.Context, loop func(ctx context.Context)) {
	r.mu.Lock()
	if r.started || r.stopped {
		r.mu.Unlock()
		return
	}
	r.started = true
	r.mu.Unlock()
	defer close(r.done)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-r.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	loop(ctx)
}

// close stops the loop and waits until run has returned. It is safe to call
// more than once and before run.
func (r *runner) close() {
	r.mu.Lock()
	if !r.stopped {
		r.stopped = true
		close(r.stop)
	}
	started := r.started
	r.mu.Unlock()
	if started {
		<-r.done
	}
}

// sleep waits for d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// backoff doubles the retry delay from min up to max.
type backoff struct {
	min, max time.Duration
	cur      time.Duration
}

func (b *backoff) next() time.Duration {
	switch {
	case b.cur == 0:
		b.cur = b.min
	case b.cur < b.max:
		b.cur *= 2
	}
	if b.cur > b.max {
		b.cur = b.max
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }
