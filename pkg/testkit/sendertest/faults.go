package sendertest

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// Faults wraps the handler of an HTTP counterpart with the failures the
// suite asks for: the next request answered with a status, or every request
// left unanswered. It is safe for concurrent use.
type Faults struct {
	next http.Handler
	done chan struct{}

	mu         sync.Mutex
	status     int
	retryAfter string
	hung       bool
}

// NewFaults returns a Faults passing requests to next. Requests it holds
// are released when the test ends.
func NewFaults(tb testing.TB, next http.Handler) *Faults {
	f := &Faults{next: next, done: make(chan struct{})}
	tb.Cleanup(func() { close(f.done) })
	return f
}

// Fail makes the next request answer status, with a Retry-After header
// when retryAfter is not empty, without reaching the wrapped handler.
func (f *Faults) Fail(status int, retryAfter string) {
	f.mu.Lock()
	f.status, f.retryAfter = status, retryAfter
	f.mu.Unlock()
}

// Hang makes every request from now on wait, unanswered, until its client
// leaves or the test ends; then its connection is closed, still unanswered.
func (f *Faults) Hang() {
	f.mu.Lock()
	f.hung = true
	f.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (f *Faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	status, retryAfter, hung := f.status, f.retryAfter, f.hung
	f.status, f.retryAfter = 0, ""
	f.mu.Unlock()
	switch {
	case hung:
		// With the body read, the server notices the client leaving.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-f.done:
		}
		// Never answer: returning would answer 200 OK, which a TLS client
		// can still read after saying it leaves (close_notify ends r's
		// context before the connection closes). Aborting closes the
		// connection unanswered.
		panic(http.ErrAbortHandler)
	case status != 0:
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Length", strconv.Itoa(0))
		w.WriteHeader(status)
	default:
		f.next.ServeHTTP(w, r)
	}
}
