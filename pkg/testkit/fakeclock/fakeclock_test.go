package fakeclock_test

import (
	"slices"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

func TestClock(t *testing.T) {
	c := fakeclock.New()
	var fired []string
	at := func(name string) func() {
		return func() { fired = append(fired, name+"@"+c.Now().Sub(fakeclock.Start).String()) }
	}
	c.AfterFunc(2*time.Second, at("b"))
	c.AfterFunc(time.Second, at("a"))
	stopped := c.AfterFunc(1500*time.Millisecond, at("stopped"))
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop reports armed, then not armed")
	}
	var chained func()
	chained = func() {
		at("c")()
		if len(fired) < 6 {
			c.AfterFunc(time.Second, chained)
		}
	}
	c.AfterFunc(2500*time.Millisecond, chained)
	c.Advance(4 * time.Second)
	want := []string{"a@1s", "b@2s", "c@2.5s", "c@3.5s"}
	if !slices.Equal(fired, want) {
		t.Fatalf("fired %v, want %v", fired, want)
	}
	if got := c.Now().Sub(fakeclock.Start); got != 4*time.Second {
		t.Fatalf("now at +%v, want +4s", got)
	}
	if next, ok := c.Next(); !ok || next.Sub(fakeclock.Start) != 4500*time.Millisecond {
		t.Fatalf("Next = %v, %v", next, ok)
	}
	c.Skip(time.Second)
	if len(fired) != 4 {
		t.Fatal("Skip fired a timer")
	}
	if !c.AdvanceToNext() || len(fired) != 5 || fired[4] != "c@5s" {
		t.Fatalf("AdvanceToNext fired %v; a late timer fires at the current time", fired)
	}
	// A stopped and swept timer comes back with Reset.
	stopped.Reset(time.Second)
	c.Advance(time.Second)
	if !slices.Contains(fired, "stopped@6s") {
		t.Fatalf("a reset timer did not fire: %v", fired)
	}
}
