// Package clock is the broker's one source of time. The push delivery
// engine and the queue store both take a Clock: production passes System,
// and tests pass the fake of package testkit/fakeclock, which they move by
// hand, so that minutes of back-off, lock durations and months of uptime
// run without waiting.
package clock

import "time"

// Clock tells the time and runs functions later. Implementations are safe
// for concurrent use.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed, unless the
	// returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a timer made by a Clock's AfterFunc; *time.Timer implements it.
type Timer interface {
	// Stop prevents the timer from firing; it reports whether it was
	// armed.
	Stop() bool
	// Reset arms the timer again to fire after d; it reports whether it
	// was armed.
	Reset(d time.Duration) bool
}

// System is the real clock.
type System struct{}

var _ Clock = System{}

// Now implements Clock.
func (System) Now() time.Time { return time.Now() }

// AfterFunc implements Clock.
func (System) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
