package brokertest

import (
	"errors"
	"testing"
	"time"
)

// PollInterval is how often Eventually re-checks its condition.
const PollInterval = 10 * time.Millisecond

// Eventually calls f every PollInterval until it returns nil, and fails tb
// with the last error f returned if that has not happened within timeout. f
// is always called at least once. It blocks the calling goroutine, and must
// be called from the test's goroutine as tb.Fatal requires.
func Eventually(tb testing.TB, timeout time.Duration, f func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("condition not met after %v: %v", timeout, err)
		}
		time.Sleep(PollInterval)
	}
}

// ErrNotYet is a convenience error for Eventually conditions with nothing
// more specific to say.
var ErrNotYet = errors.New("brokertest: condition not met yet")
