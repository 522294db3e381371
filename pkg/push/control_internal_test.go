package push

import "testing"

const ms = int64(1e6)

func TestControlLimit_SlowStartToTheMaximum(t *testing.T) {
	c := newControl(16)
	for i := 2; i <= 16; i++ {
		c.succeeded(0, 16)
		if c.limit != i {
			t.Fatalf("after %d successes the limit is %d, want %d", i-1, c.limit, i)
		}
	}
	c.succeeded(0, 16)
	if c.limit != 16 {
		t.Errorf("the limit went past the maximum: %d", c.limit)
	}
}

// overload is an overload signal to a request sent at start, answered at
// now, as the engine reports it.
func (c *control) overload(start, now int64) {
	c.answered(true)
	c.overloaded(start, now)
}

func TestControlLimit_OverloadOncePerRoundTrip(t *testing.T) {
	c := control{limit: 16, win: 16, ceiling: 16}
	for range 16 { // a round trip of successes
		c.answered(false)
	}
	// Sixteen requests sent at 0..15 ms all answered 503 at 20 ms: one
	// round trip, one decrease, by half the share of overload signals
	// among the answers so far: one in seventeen.
	for start := range int64(16) {
		c.overload(start*ms, 20*ms)
	}
	if c.limit != 15 {
		t.Fatalf("limit %d after a round of 503s, want 15", c.limit)
	}
	// Requests sent after the decrease are of the next round, and all
	// answers since were 503s: halved.
	for start := int64(21); start < 36; start++ {
		c.overload(start*ms, 40*ms)
	}
	if c.limit != 7 {
		t.Fatalf("limit %d after a second round of 503s, want 7", c.limit)
	}
	for i := range int64(20) {
		c.overload((50+10*i)*ms, (55+10*i)*ms) // each its own round
	}
	if c.limit != 1 {
		t.Errorf("limit %d after an endpoint answers 503 to everything, want 1", c.limit)
	}
}

// TestControlLimit_ShareOfOverload: an endpoint that answers one request
// in eight with 503, whatever the load, costs the limit a sixteenth per
// round trip, which one more per round trip makes up for.
func TestControlLimit_ShareOfOverload(t *testing.T) {
	c := control{limit: 16, win: 16, ceiling: 16}
	now := int64(0)
	for range 100 { // round trips of 1 ms
		start := now
		now += ms
		for i := range c.limit {
			if i%8 == 7 {
				c.overload(start, now)
				continue
			}
			c.answered(false)
			c.succeeded(now, 16)
		}
	}
	if c.limit < 13 {
		t.Errorf("limit %d after 100 round trips with one answer in eight a 503, want 13 at least", c.limit)
	}
}

func TestControlLimit_RecoversWhenOverloadEnds(t *testing.T) {
	c := control{limit: 16, win: 16, ceiling: 16, answers: 2, busy: 1}
	c.overloaded(0, 10*ms)
	if c.limit != 12 || c.ceiling != 12 {
		t.Fatalf("after a decrease: limit %d, ceiling %v; want 12, 12", c.limit, c.ceiling)
	}
	// At the ceiling, one more per round trip: twelve successes.
	for range 11 {
		c.succeeded(20*ms, 16)
	}
	if c.limit != 12 {
		t.Fatalf("limit %d after 11 successes at the ceiling, want 12", c.limit)
	}
	c.succeeded(20*ms, 16)
	if c.limit != 13 {
		t.Fatalf("limit %d after a round trip of successes at the ceiling, want 13", c.limit)
	}
	// Once no overload has come for recoverAfter, one more per success.
	now := 10*ms + recoverAfter
	for range 3 {
		c.succeeded(now, 16)
	}
	if c.limit != 16 || c.cutAt != 0 {
		t.Errorf("limit %d (cut at %d) after 3 successes %v after the last overload, want 16 and none",
			c.limit, c.cutAt, recoverAfter)
	}
}

func TestControlLimit_ProbeAndGrowAgain(t *testing.T) {
	c := control{limit: 16, win: 16, ceiling: 16}
	c.probe()
	if c.limit != 1 {
		t.Fatalf("limit %d on probation, want 1", c.limit)
	}
	for range 15 {
		c.succeeded(0, 16)
	}
	if c.limit != 16 {
		t.Errorf("limit %d after 15 successes once probation ended, want 16", c.limit)
	}
}
