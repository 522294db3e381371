// Package fakeclock is a clock.Clock that moves only when a test moves it,
// for the unit tests of everything that takes a clock (the push delivery
// engine, the queue store): they run the real schedules, lock durations and
// long uptimes without waiting.
package fakeclock

import (
	"slices"
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/clock"
)

// Start is where every Clock starts.
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is a fake clock. Timers fire only inside Advance, AdvanceTo and
// AdvanceToNext, in the order of their times, each with the clock set to
// its time, on the goroutine that moves the clock. It is safe for
// concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer // armed ones, and some stopped ones not yet swept
}

var _ clock.Clock = (*Clock)(nil)

// New returns a clock set to Start.
func New() *Clock { return &Clock{now: Start} }

type timer struct {
	c      *Clock
	at     time.Time
	f      func()
	armed  bool
	listed bool // in c.timers
}

// Now implements clock.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements clock.Clock.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, at: c.now.Add(d), f: f, armed: true, listed: true}
	c.timers = append(c.timers, t)
	return t
}

// Stop implements clock.Timer.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// Reset implements clock.Timer.
func (t *timer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.at, t.armed = t.c.now.Add(d), true
	if !t.listed {
		t.listed = true
		t.c.timers = append(t.c.timers, t)
	}
	return was
}

// Next returns when the earliest armed timer fires, and false if none is
// armed.
func (c *Clock) Next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.dueLocked(time.Time{}, false); t != nil {
		return t.at, true
	}
	return time.Time{}, false
}

// Armed returns the times of the armed timers, soonest first.
func (c *Clock) Armed() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Time
	for _, t := range c.timers {
		if t.armed {
			out = append(out, t.at)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// dueLocked returns the earliest armed timer, at end or before when
// bounded.
func (c *Clock) dueLocked(end time.Time, bounded bool) *timer {
	var due *timer
	for _, t := range c.timers {
		if t.armed && (!bounded || !t.at.After(end)) && (due == nil || t.at.Before(due.at)) {
			due = t
		}
	}
	return due
}

// Advance moves the clock by d, firing the timers that fall due on the way.
func (c *Clock) Advance(d time.Duration) { c.AdvanceTo(c.Now().Add(d)) }

// AdvanceTo moves the clock to end (never backwards), firing the timers
// that fall due on the way, in order, each with the clock set to its time.
// A timer armed by one that fires is fired too if it falls due by end.
func (c *Clock) AdvanceTo(end time.Time) {
	for {
		c.mu.Lock()
		due := c.dueLocked(end, true)
		if due == nil {
			if end.After(c.now) {
				c.now = end
			}
			c.sweepLocked()
			c.mu.Unlock()
			return
		}
		due.armed = false
		if due.at.After(c.now) {
			c.now = due.at
		}
		c.mu.Unlock()
		due.f()
	}
}

// AdvanceToNext moves the clock to the earliest armed timer and fires it
// (and any other due then); it returns false if no timer is armed.
func (c *Clock) AdvanceToNext() bool {
	at, ok := c.Next()
	if ok {
		c.AdvanceTo(at)
	}
	return ok
}

// Skip moves the clock by d without firing the timers due on the way, as
// when a timer's goroutine runs late; the next Advance fires them.
func (c *Clock) Skip(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// sweepLocked forgets the timers that are not armed, so that a test making
// many timers does not scan them all forever; Reset lists one again.
func (c *Clock) sweepLocked() {
	c.timers = slices.DeleteFunc(c.timers, func(t *timer) bool {
		if !t.armed {
			t.listed = false
		}
		return !t.armed
	})
}
