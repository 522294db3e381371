package delivery_test

import (
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/delivery"
)

// fakeClock is a delivery.Clock that moves only when told, so tests run the
// real schedules, and long uptimes, without waiting.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

type fakeTimer struct {
	c      *fakeClock
	at     time.Time
	f      func()
	active bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) delivery.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f, active: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.at, t.active = t.c.now.Add(d), true
	return was
}

// next returns when the earliest armed timer fires.
func (c *fakeClock) next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var at time.Time
	found := false
	for _, t := range c.timers {
		if t.active && (!found || t.at.Before(at)) {
			at, found = t.at, true
		}
	}
	return at, found
}

// Advance moves the clock by d, firing the timers that fall due on the way
// in order, each with the clock set to its time.
func (c *fakeClock) Advance(d time.Duration) {
	c.AdvanceTo(c.Now().Add(d))
}

// AdvanceTo moves the clock to t, firing due timers in order.
func (c *fakeClock) AdvanceTo(end time.Time) {
	for {
		c.mu.Lock()
		var due *fakeTimer
		for _, t := range c.timers {
			if t.active && !t.at.After(end) && (due == nil || t.at.Before(due.at)) {
				due = t
			}
		}
		if due == nil {
			if end.After(c.now) {
				c.now = end
			}
			c.mu.Unlock()
			return
		}
		due.active = false
		if due.at.After(c.now) {
			c.now = due.at
		}
		c.mu.Unlock()
		due.f()
	}
}

// AdvanceToNext moves the clock to the earliest armed timer and fires it;
// it returns false if none is armed.
func (c *fakeClock) AdvanceToNext() bool {
	at, ok := c.next()
	if ok {
		c.AdvanceTo(at)
	}
	return ok
}
