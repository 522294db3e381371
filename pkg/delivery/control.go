package delivery

// control sizes one subscription's concurrency: how many of its requests
// may count as in flight at once (docs/delivery.md#how-concurrency-adapts).
//
// Only what says the endpoint wants less lowers the limit: 429 and 503
// (OutcomeBusy). A 500, a 408, a dropped connection or a timeout says that
// one request failed; the event is retried on its schedule and the limit
// stays. An overload signal takes a quarter off the limit, at most once
// per round trip, as TCP takes one decrease per window: the answers to
// requests sent before the last decrease were sized by the old limit and
// tell nothing new. Successes raise the limit: by one each (doubling per
// round trip) below the ceiling, which a decrease sets to the lowered
// limit, and by one per round trip above it, up to MaxPerSubscription. A
// ceiling is forgotten once no overload signal has come for recoverAfter,
// so that the limit doubles per round trip again when the overload has
// ended.
//
// Its fields are guarded by the queue's lock; times are in ns since
// Engine.epoch.
type control struct {
	limit   int
	ceiling int
	grown   int   // successes toward the next increase above the ceiling
	cutAt   int64 // when the limit was last lowered; 0 never
}

// recoverAfter is how long after the last overload signal a lowered
// ceiling is forgotten.
const recoverAfter = int64(2e9) // 2 s

func newControl(maxLimit int) control {
	return control{limit: 1, ceiling: maxLimit}
}

// succeeded raises the limit after a successful request.
func (c *control) succeeded(now int64, maxLimit int) {
	if c.cutAt != 0 && now-c.cutAt >= recoverAfter {
		c.ceiling, c.cutAt = maxLimit, 0
	}
	switch {
	case c.limit >= maxLimit:
		c.limit = maxLimit
	case c.limit < c.ceiling:
		c.limit++
	default:
		c.grown++
		if c.grown >= c.limit {
			c.limit++
			c.grown = 0
		}
	}
}

// overloaded lowers the limit by a quarter after an overload signal to a
// request that started at start, unless the limit was lowered since that
// request was sent.
func (c *control) overloaded(start, now int64) {
	if c.cutAt != 0 && start <= c.cutAt {
		return
	}
	c.limit = max(1, c.limit*3/4)
	c.ceiling, c.grown, c.cutAt = c.limit, 0, max(now, 1)
}

// probe leaves one request in flight: the subscription is on probation.
func (c *control) probe() {
	c.limit, c.grown = 1, 0
}
