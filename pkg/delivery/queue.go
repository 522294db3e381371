package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// item is one event waiting for one subscription. Many may be queued, so it
// is kept small: the event's body, its request, and two 32-bit counters.
type item struct {
	body     []byte
	s        *shared // the request the event came in
	attempts int32   // attempts made so far, including one in flight
	due      uint32  // when a back-off item is due, in ms since Engine.epoch
}

// queue holds one subscription's events: those ready for an attempt and
// those waiting in the two back-off lists. Items in a back-off list are
// appended with a due time a fixed delay ahead, so each list is ordered by
// due time and only its head needs watching.
type queue struct {
	e *Engine

	mu      sync.Mutex
	sub     *eventgrid.EventSubscription
	ready   deque
	backoff [2]deque
	workers int // started and not yet exited
	busy    int // workers with a batch in flight
	timer   *time.Timer
	closed  bool

	lastFailure time.Time
	lastError   string

	// logs rate-limit the failure and expiry lines, by logKind; logTimer
	// flushes their suppressed counts when a window ends.
	logs     [numLogKinds]logLimiter
	logTimer *time.Timer
}

// push adds a freshly published event. It returns false if the queue was
// discarded.
func (q *queue) push(it item) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.ready.push(it)
	q.startWorkersLocked()
	return true
}

// update applies a subscription's new settings; they take effect for the
// events already queued from their next attempt on.
func (q *queue) update(sub *eventgrid.EventSubscription) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sub = sub
	q.startWorkersLocked()
}

// policy returns the subscription's effective retry limits.
func (q *queue) policyLocked() (maxAttempts int32, ttl time.Duration) {
	o := &q.e.opts
	maxAttempts, ttl = int32(o.DefaultMaxDeliveryAttempts), o.DefaultTTL
	if p := q.sub.RetryPolicy; p != nil {
		if p.MaxDeliveryAttempts > 0 {
			maxAttempts = int32(p.MaxDeliveryAttempts)
		}
		if p.EventExpiryInMinutes > 0 {
			ttl = time.Duration(p.EventExpiryInMinutes) * time.Minute
		}
	}
	return maxAttempts, ttl
}

// batchCapsLocked returns the most events and bytes one request may carry.
func (q *queue) batchCapsLocked() (events, bytes int) {
	d := q.sub.Destination
	if !d.Batching() {
		return 1, 0
	}
	o := &q.e.opts
	events, bytes = o.DefaultMaxEventsPerBatch, o.DefaultMaxBatchBytes
	if d.MaxEventsPerBatch > 0 {
		events = d.MaxEventsPerBatch
	}
	if d.PreferredBatchSizeInKilobytes > 0 {
		bytes = d.PreferredBatchSizeInKilobytes * 1024
	}
	return events, bytes
}

// startWorkersLocked starts workers until there is an idle one for every
// batch's worth of ready events, within the per-subscription bound.
func (q *queue) startWorkersLocked() {
	if q.closed || q.ready.len() == 0 {
		return
	}
	per, _ := q.batchCapsLocked()
	want := (q.ready.len() + per - 1) / per
	for q.workers < q.e.opts.MaxPerSubscription && q.workers-q.busy < want {
		select {
		case <-q.e.stop:
			return
		default:
		}
		q.workers++
		q.e.wg.Add(1)
		go q.work()
	}
}

// work takes batches and sends them until the queue has nothing ready or
// the engine stops. A worker holds one of the engine's request slots only
// while it takes and sends a batch.
func (q *queue) work() {
	e := q.e
	defer e.wg.Done()
	var b taken // reused for every batch this worker sends
	for {
		select {
		case <-e.stop:
			q.exit()
			return
		default:
		}
		select {
		case <-e.stop:
			q.exit()
			return
		case e.sem <- struct{}{}:
		}
		q.mu.Lock()
		if !q.takeLocked(time.Now(), &b) {
			q.workers--
			q.mu.Unlock()
			<-e.sem
			return
		}
		q.busy++
		q.mu.Unlock()

		start := time.Now()
		ctx, cancel := context.WithTimeout(e.sendCtx, e.opts.DeliverTimeout)
		err := e.sender.Send(ctx, &b.Batch)
		cancel()
		<-e.sem
		e.metrics.Attempt(b.Subscription, len(b.items), time.Since(start), err)

		q.mu.Lock()
		q.busy--
		q.completeLocked(&b, err, time.Now())
		q.mu.Unlock()
	}
}

func (q *queue) exit() {
	q.mu.Lock()
	q.workers--
	q.mu.Unlock()
}

// taken is a batch with the queue items it came from. A worker reuses one
// for all its batches, so senders must not keep a Batch after Send returns.
type taken struct {
	Batch
	items []item
}

// takeLocked moves due back-off items to the ready list and takes the next
// batch from it into b, dropping events whose retry policy has run out. It
// returns false when nothing is ready or the queue was discarded.
func (q *queue) takeLocked(now time.Time, b *taken) bool {
	b.Subscription, b.DeliveryCount = q.sub, 0
	clear(b.items) // drop the previous batch's references
	clear(b.Bodies)
	b.items, b.Bodies = b.items[:0], b.Bodies[:0]
	if q.closed {
		return false
	}
	q.promoteLocked(now)
	maxEvents, maxBytes := q.batchCapsLocked()
	maxAttempts, ttl := q.policyLocked()
	size := 2 // the array's brackets
	for q.ready.len() > 0 && len(b.items) < maxEvents {
		it := q.ready.front()
		if now.Sub(it.s.accepted) > ttl {
			q.dropLocked(q.ready.pop(), DropExpired, now)
			continue
		}
		if it.attempts >= maxAttempts { // the policy was lowered meanwhile
			q.dropLocked(q.ready.pop(), DropMaxAttempts, now)
			continue
		}
		n := len(it.body)
		if len(b.items) > 0 {
			if maxBytes > 0 && size+1+n > maxBytes {
				break
			}
			size++ // comma
		}
		size += n
		it2 := q.ready.pop()
		if it2.attempts == 0 {
			q.e.metrics.FirstAttempt(q.sub, now.Sub(it2.s.accepted))
		}
		b.DeliveryCount = max(b.DeliveryCount, int(it2.attempts))
		it2.attempts++
		b.items = append(b.items, it2)
		b.Bodies = append(b.Bodies, it2.body)
	}
	return len(b.items) > 0
}

// promoteLocked moves back-off items that are due to the ready list.
func (q *queue) promoteLocked(now time.Time) {
	t := q.e.millis(now)
	for i := range q.backoff {
		l := &q.backoff[i]
		for l.len() > 0 && l.front().due <= t {
			q.ready.push(l.pop())
		}
	}
}

// completeLocked records the outcome of a batch: delivered events leave the
// queue; failed ones move, each on its own, to a back-off list or are
// dropped by their retry policy.
func (q *queue) completeLocked(b *taken, err error, now time.Time) {
	e := q.e
	sub := b.Subscription
	if err == nil {
		for _, it := range b.items {
			e.release(it.s)
		}
		if e.opts.LogDeliverySuccess {
			e.log.Info().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", len(b.items)).
				Int("deliveryCount", b.DeliveryCount).Msg("delivered")
		}
		q.startWorkersLocked()
		return
	}
	q.lastFailure, q.lastError = now, err.Error()
	if e.opts.LogDeliveryFailure {
		if ok, suppressed := q.allowLogLocked(logFailure, now); ok {
			l := e.log.Warn().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", len(b.items)).
				Int("attempt", b.DeliveryCount+1).Err(err)
			if suppressed > 0 {
				l = l.Int("suppressed", suppressed)
			}
			l.Msg(logMessages[logFailure])
		}
	}
	if q.closed {
		for _, it := range b.items {
			q.e.metrics.Dropped(sub, DropDeleted, 1)
			e.release(it.s)
		}
		return
	}
	maxAttempts, ttl := q.policyLocked()
	for _, it := range b.items {
		if it.attempts >= maxAttempts {
			q.dropLocked(it, DropMaxAttempts, now)
			continue
		}
		list := 1
		if it.attempts == 1 {
			list = 0
		}
		due := now.Add(e.opts.Backoff[list])
		if due.Sub(it.s.accepted) > ttl {
			// The next attempt would come after the event's time to live.
			q.dropLocked(it, DropExpired, now)
			continue
		}
		it.due = e.millis(due)
		q.backoff[list].push(it)
	}
	q.armLocked(now)
}

// dropLocked removes an event from the queue because of its retry policy.
func (q *queue) dropLocked(it item, reason DropReason, now time.Time) {
	e := q.e
	e.metrics.Dropped(q.sub, reason, 1)
	if e.opts.LogEventExpiry {
		if ok, suppressed := q.allowLogLocked(logExpiry, now); ok {
			l := e.log.Warn().Str("topic", q.sub.Topic).Str("subscription", q.sub.Name).Str("eventId", eventID(it.body)).
				Str("reason", string(reason)).Int32("attempts", it.attempts).
				Dur("age", now.Sub(it.s.accepted))
			if suppressed > 0 {
				l = l.Int("suppressed", suppressed)
			}
			l.Msg(logMessages[logExpiry])
		}
	}
	e.release(it.s)
}

// armLocked sets the timer for the earliest due back-off item.
func (q *queue) armLocked(now time.Time) {
	var next uint32
	found := false
	for i := range q.backoff {
		if l := &q.backoff[i]; l.len() > 0 && (!found || l.front().due < next) {
			next, found = l.front().due, true
		}
	}
	if !found || q.closed {
		return
	}
	d := time.Duration(int64(next)-int64(q.e.millis(now))) * time.Millisecond
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.onTimer)
		return
	}
	q.timer.Reset(d)
}

// onTimer runs when back-off items fall due.
func (q *queue) onTimer() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	now := time.Now()
	q.promoteLocked(now)
	q.startWorkersLocked()
	q.armLocked(now)
}

func (q *queue) stopTimer() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.timer != nil {
		q.timer.Stop()
	}
	if q.logTimer != nil {
		q.logTimer.Stop()
	}
}

// discard empties the queue for good and returns how many events it held.
// Batches in flight finish, and are then dropped too.
func (q *queue) discard(reason DropReason) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	if q.timer != nil {
		q.timer.Stop()
	}
	q.flushLogsLocked()
	n := 0
	drop := func(it item) {
		n++
		q.e.release(it.s)
	}
	q.ready.clear(drop)
	q.backoff[0].clear(drop)
	q.backoff[1].clear(drop)
	if n > 0 {
		q.e.metrics.Dropped(q.sub, reason, n)
	}
	return n
}

func (q *queue) stats() QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return QueueStats{
		Subscription: q.sub,
		Ready:        q.ready.len(),
		Backoff:      [2]int{q.backoff[0].len(), q.backoff[1].len()},
		InFlight:     q.busy,
		LastFailure:  q.lastFailure,
		LastError:    q.lastError,
	}
}

// millis returns t as milliseconds since the engine's epoch, the unit of
// back-off due times (good for 49 days, far beyond the longest time to
// live). Times before the epoch are 0.
func (e *Engine) millis(t time.Time) uint32 {
	return uint32(max(t.Sub(e.epoch).Milliseconds(), 0))
}

// eventID returns the id in an event body, for log lines; "" when it has
// none (custom events).
func eventID(body []byte) string {
	v, ok := rawjson.Member(body, "id")
	if !ok {
		return ""
	}
	id, _ := rawjson.Unquote(v)
	return id
}
