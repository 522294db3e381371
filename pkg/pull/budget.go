package pull

import "sync"

// Budget bounds the memory queued events hold. Reserve either takes the
// whole amount and returns true, or takes nothing and returns false.
// Implementations are safe for concurrent use.
type Budget interface {
	Reserve(events int, bytes int64) bool
	Release(events int, bytes int64)
}

// Limit is a Budget of at most Events events and Bytes bytes; a zero or
// negative bound is no bound.
type Limit struct {
	Events int
	Bytes  int64

	mu     sync.Mutex
	events int
	bytes  int64
}

// Reserve implements Budget.
func (l *Limit) Reserve(events int, bytes int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Events > 0 && l.events+events > l.Events || l.Bytes > 0 && l.bytes+bytes > l.Bytes {
		return false
	}
	l.events += events
	l.bytes += bytes
	return true
}

// Release implements Budget.
func (l *Limit) Release(events int, bytes int64) {
	l.mu.Lock()
	l.events -= events
	l.bytes -= bytes
	l.mu.Unlock()
}

// Used returns what is reserved now.
func (l *Limit) Used() (events int, bytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events, l.bytes
}

type unlimited struct{}

func (unlimited) Reserve(int, int64) bool { return true }
func (unlimited) Release(int, int64)      {}
