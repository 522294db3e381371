package push

// control sizes one subscription's concurrency: how many of its requests
// may count as in flight at once (docs/delivery.md#how-concurrency-adapts).
//
// Only what says the endpoint wants less lowers the limit: 429 and 503
// (OutcomeBusy). A 500, a 408, a dropped connection or a timeout says that
// one request failed; the event is retried on its schedule and the limit
// stays. An overload signal lowers the limit at most once per round trip,
// as TCP takes one decrease per window: the answers to requests sent
// before the last decrease were sized by the old limit and tell nothing
// new. How much it lowers it follows how much the endpoint is refusing, as
// DCTCP (RFC 8257) sizes its window by the share of marked packets: by
// half the share of overload signals among the answers since the last
// decrease, so by a sixteenth when one answer in eight says so, and by a
// half when all do. Successes raise the limit: by one each (doubling per
// round trip) below the ceiling, which a decrease sets to the lowered
// limit, and by one per round trip above it, up to MaxPerSubscription. A
// ceiling is forgotten once no overload signal has come for recoverAfter,
// so that the limit doubles per round trip again when the overload has
// ended.
//
// Its fields are guarded by the queue's lock; times are in ns since
// Engine.epoch.
type control struct {
	limit int // int(win), at least 1: the requests that may count at once
	// win is the limit with the fraction decreases leave, so that many
	// small decreases add up; ceiling is where growth slows down.
	win     float64
	ceiling float64
	grown   int   // successes toward the next increase above the ceiling
	cutAt   int64 // when the limit was last lowered; 0 never
	// answers and busy count the requests ended since the last decrease,
	// and the overload signals among them.
	answers int
	busy    int
}

// recoverAfter is how long after the last overload signal a lowered
// ceiling is forgotten.
const recoverAfter = int64(2e9) // 2 s

func newControl(maxLimit int) control {
	return control{limit: 1, win: 1, ceiling: float64(maxLimit)}
}

// set makes win the limit.
func (c *control) set(win float64) {
	c.win = max(1, win)
	c.limit = int(c.win)
}

// succeeded raises the limit after a successful request.
func (c *control) succeeded(now int64, maxLimit int) {
	if c.cutAt != 0 && now-c.cutAt >= recoverAfter {
		c.ceiling, c.cutAt = float64(maxLimit), 0
	}
	switch {
	case c.win >= float64(maxLimit):
		c.set(float64(maxLimit))
	case c.win < c.ceiling:
		c.set(c.win + 1)
	default:
		c.grown++
		if c.grown >= c.limit {
			c.set(c.win + 1)
			c.grown = 0
		}
	}
}

// answered counts the end of a request, and whether it was an overload
// signal.
func (c *control) answered(overload bool) {
	c.answers++
	if overload {
		c.busy++
	}
}

// overloaded lowers the limit after an overload signal to a request that
// started at start, unless the limit was lowered since that request was
// sent: by half the share of overload signals.
func (c *control) overloaded(start, now int64) {
	if c.cutAt != 0 && start <= c.cutAt {
		return
	}
	share := float64(c.busy) / float64(max(c.answers, 1))
	c.set(c.win * (1 - share/2))
	c.ceiling, c.grown, c.cutAt = c.win, 0, max(now, 1)
	c.answers, c.busy = 0, 0
}

// probe leaves one request in flight: the subscription is on probation.
func (c *control) probe() {
	c.set(1)
	c.grown = 0
}
