package pull

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

type state uint8

const (
	available state = iota
	locked
	delayed
	gone
)

// entry is one event in one queue subscription.
type entry struct {
	body      []byte
	published time.Time
	expires   time.Time // published + the time to live
	count     int       // deliveries so far
	state     state

	token     string
	lockedAt  time.Time
	lockUntil time.Time
	readyAt   time.Time // of a delayed release

	prev, next *entry // in the available list

	lockIdx, delayIdx, ttlIdx int
}

// waiter is one receive waiting for events.
type waiter struct {
	ch      chan struct{}
	expired atomic.Bool
}

func (w *waiter) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// queue is one queue subscription's events.
//
// An entry is in exactly one place: the available list (and the TTL heap),
// the delayed heap (and the TTL heap), or the locked heap (and the token
// map). Its state says which.
type queue struct {
	s     *Store
	share Limit

	mu      sync.Mutex
	sub     *eventgrid.EventSubscription
	head    *entry
	tail    *entry
	nAvail  int
	tokens  map[string]*entry
	locks   timeHeap // by lockUntil
	delays  timeHeap // by readyAt
	ttl     timeHeap // by expires; available and delayed entries only
	waiters map[*waiter]struct{}
	timer   Timer
	timerAt time.Time
	closed  bool
	// closeReason is why the queue was closed.
	closeReason string
}

func newQueue(s *Store, sub *eventgrid.EventSubscription) *queue {
	q := &queue{
		s:       s,
		sub:     sub,
		share:   Limit{Events: s.opts.MaxEventsPerSubscription, Bytes: s.opts.MaxBytesPerSubscription},
		tokens:  map[string]*entry{},
		waiters: map[*waiter]struct{}{},
	}
	q.locks = timeHeap{at: func(e *entry) time.Time { return e.lockUntil }, index: func(e *entry) *int { return &e.lockIdx }}
	q.delays = timeHeap{at: func(e *entry) time.Time { return e.readyAt }, index: func(e *entry) *int { return &e.delayIdx }}
	q.ttl = timeHeap{at: func(e *entry) time.Time { return e.expires }, index: func(e *entry) *int { return &e.ttlIdx }}
	return q
}

func (q *queue) countsLocked() Counts {
	return Counts{Available: q.nAvail, Locked: q.locks.Len(), Delayed: q.delays.Len(), Waiting: len(q.waiters)}
}

func (q *queue) lockDuration() time.Duration {
	return q.s.scale(time.Duration(q.sub.Queue.ReceiveLockSeconds) * time.Second)
}

// effects are what a change under the queue's lock leaves to do after it.
type effects struct {
	letters []DeadLetter
	dropped map[string]int
	freed   int // events whose budget is released
	bytes   int64
	wake    bool
	expired int
}

func (fx *effects) drop(reason string) {
	if fx.dropped == nil {
		fx.dropped = map[string]int{}
	}
	fx.dropped[reason]++
}

// apply does fx's work. sub is the subscription as it was under the lock.
func (q *queue) apply(sub *eventgrid.EventSubscription, fx *effects) {
	if fx.freed > 0 {
		q.release(fx.freed, fx.bytes)
	}
	m := q.s.opts.Metrics
	if fx.expired > 0 {
		m.LockExpired(sub, fx.expired)
		if q.s.opts.LogDeliveryFailure {
			q.s.log.Info().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", fx.expired).Msg("locks expired unsettled; the events are available again")
		}
	}
	for reason, n := range fx.dropped {
		m.Dropped(sub, reason, n)
		if q.s.opts.LogDeliveryFailure || reason == ReasonTimeToLive && q.s.opts.LogEventExpiry {
			q.s.log.Warn().Str("topic", sub.Topic).Str("subscription", sub.Name).Str("reason", reason).Int("events", n).Msg("events dropped")
		}
	}
	if len(fx.letters) > 0 {
		byReason := map[string]int{}
		for _, l := range fx.letters {
			byReason[l.Reason]++
			q.s.opts.DeadLetterer.DeadLetter(l)
		}
		for reason, n := range byReason {
			m.DeadLettered(sub, reason, n)
			if q.s.opts.LogDeliveryFailure || reason == ReasonTimeToLive && q.s.opts.LogEventExpiry {
				q.s.log.Warn().Str("topic", sub.Topic).Str("subscription", sub.Name).Str("reason", reason).Int("events", n).Msg("events dead-lettered")
			}
		}
	}
}

// release returns events and bytes to the subscription's share and the
// broker's budget.
func (q *queue) release(events int, bytes int64) {
	q.share.Release(events, bytes)
	q.s.opts.Global.Release(events, bytes)
}

// finishLocked ends e, which is in no list, heap or map any more: it is
// dead-lettered when the subscription has a destination for that, and
// dropped otherwise.
func (q *queue) finishLocked(e *entry, reason string, fx *effects) {
	e.state = gone
	size := int64(len(e.body))
	if q.sub.DeadLetter != nil && q.s.opts.DeadLetterer != nil && reason != ReasonSubscriptionDeleted && reason != ReasonShutdown {
		var once sync.Once
		fx.letters = append(fx.letters, DeadLetter{
			Subscription:  q.sub,
			Body:          e.body,
			Reason:        reason,
			DeliveryCount: e.count,
			Published:     e.published,
			LastReceive:   e.lockedAt,
			Done:          func() { once.Do(func() { q.release(1, size) }) },
		})
		return
	}
	fx.drop(reason)
	fx.freed++
	fx.bytes += size
}

func (q *queue) pushBackLocked(e *entry) {
	e.state = available
	e.prev, e.next = q.tail, nil
	if q.tail != nil {
		q.tail.next = e
	} else {
		q.head = e
	}
	q.tail = e
	q.nAvail++
	q.ttl.add(e)
}

func (q *queue) unlinkLocked(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		q.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		q.tail = e.prev
	}
	e.prev, e.next = nil, nil
	q.nAvail--
	q.ttl.remove(e)
}

// unlockLocked ends e's lock (released or expired): it is dead-lettered
// past its delivery count or time to live, and otherwise available again
// now or after delay.
func (q *queue) unlockLocked(e *entry, now time.Time, delay time.Duration, fx *effects) {
	q.locks.remove(e)
	delete(q.tokens, e.token)
	e.token = ""
	switch {
	case e.count >= q.sub.Queue.MaxDeliveryCount:
		q.finishLocked(e, ReasonMaxDeliveryCount, fx)
	case !now.Before(e.expires):
		q.finishLocked(e, ReasonTimeToLive, fx)
	case delay > 0:
		e.state = delayed
		e.readyAt = now.Add(delay)
		q.delays.add(e)
		q.ttl.add(e)
	default:
		q.pushBackLocked(e)
		fx.wake = true
	}
}

// takeLocked locks up to max available events.
func (q *queue) takeLocked(now time.Time, max int, out []Received, fx *effects) []Received {
	lock := q.lockDuration()
	var tokens tokenSource
	for len(out) < max && q.head != nil {
		e := q.head
		q.unlinkLocked(e)
		if !now.Before(e.expires) {
			q.finishLocked(e, ReasonTimeToLive, fx)
			continue
		}
		e.count++
		e.state = locked
		e.token = tokens.next(min(max-len(out), q.nAvail+1))
		e.lockedAt = now
		e.lockUntil = now.Add(lock)
		q.tokens[e.token] = e
		q.locks.add(e)
		out = append(out, Received{LockToken: e.token, DeliveryCount: e.count, Body: e.body})
	}
	return out
}

func (q *queue) receive(ctx context.Context, max int, wait time.Duration) ([]Received, error) {
	var (
		w     *waiter
		timer Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var fx effects
		q.mu.Lock()
		if w != nil {
			delete(q.waiters, w)
		}
		if q.closed {
			sub, reason := q.sub, q.closeReason
			q.mu.Unlock()
			if reason == ReasonShutdown {
				return nil, nil // the broker is stopping: an empty answer
			}
			return nil, missing(sub)
		}
		now := q.s.opts.Clock.Now()
		q.expireLocked(now, &fx) // events past their time to live are not handed out
		out := q.takeLocked(now, max, nil, &fx)
		if len(out) > 0 {
			q.armLocked(now)
		}
		if len(out) > 0 || wait <= 0 || (w != nil && w.expired.Load()) {
			sub := q.sub
			q.mu.Unlock()
			q.apply(sub, &fx)
			if len(out) > 0 {
				q.s.opts.Metrics.Received(sub, len(out))
			}
			return out, nil
		}
		if w == nil {
			w = &waiter{ch: make(chan struct{}, 1)}
			ww := w
			timer = q.s.opts.Clock.AfterFunc(wait, func() { ww.expired.Store(true); ww.wake() })
		}
		q.waiters[w] = struct{}{}
		sub := q.sub
		q.mu.Unlock()
		q.apply(sub, &fx)
		select {
		case <-w.ch:
		case <-ctx.Done():
			q.mu.Lock()
			delete(q.waiters, w)
			q.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}

// wakeLocked tells the waiting receives that events are available.
func (q *queue) wakeLocked() {
	for w := range q.waiters {
		w.wake()
		delete(q.waiters, w)
	}
}

// expireLocked processes what is due at now: expired locks, delayed
// releases whose delay has passed, and events past their time to live.
func (q *queue) expireLocked(now time.Time, fx *effects) {
	for e := q.locks.first(); e != nil && !now.Before(e.lockUntil); e = q.locks.first() {
		fx.expired++
		q.unlockLocked(e, now, 0, fx)
	}
	for e := q.delays.first(); e != nil && !now.Before(e.readyAt); e = q.delays.first() {
		q.delays.remove(e)
		q.ttl.remove(e)
		if !now.Before(e.expires) {
			q.finishLocked(e, ReasonTimeToLive, fx)
			continue
		}
		q.pushBackLocked(e)
		fx.wake = true
	}
	for e := q.ttl.first(); e != nil && !now.Before(e.expires); e = q.ttl.first() {
		if e.state == delayed {
			q.delays.remove(e)
			q.ttl.remove(e)
		} else {
			q.unlinkLocked(e)
		}
		q.finishLocked(e, ReasonTimeToLive, fx)
	}
}

// armLocked sets the queue's timer for its next due time.
func (q *queue) armLocked(now time.Time) {
	var next time.Time
	for _, h := range []*timeHeap{&q.locks, &q.delays, &q.ttl} {
		if e := h.first(); e != nil {
			if t := h.at(e); next.IsZero() || t.Before(next) {
				next = t
			}
		}
	}
	if next.IsZero() || q.closed {
		return
	}
	if q.timer != nil && !q.timerAt.After(next) {
		return // it fires first, and re-arms
	}
	if q.timer != nil {
		q.timer.Stop()
	}
	q.timerAt = next
	q.timer = q.s.opts.Clock.AfterFunc(max(next.Sub(now), 0), q.onTimer)
}

func (q *queue) onTimer() {
	var fx effects
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.timer = nil
	now := q.s.opts.Clock.Now()
	q.expireLocked(now, &fx)
	q.armLocked(now)
	if fx.wake {
		q.wakeLocked()
	}
	sub := q.sub
	q.mu.Unlock()
	q.apply(sub, &fx)
}

func (q *queue) settle(tokens []string, kind string, delay time.Duration) Result {
	var (
		fx  effects
		res Result
	)
	q.mu.Lock()
	if q.closed {
		sub := q.sub
		q.mu.Unlock()
		for _, t := range tokens {
			res.Failed = append(res.Failed, Failure{LockToken: t, Code: CodeTokenLost, Message: "The event subscription " + sub.Name + " was deleted."})
		}
		return res
	}
	now := q.s.opts.Clock.Now()
	q.expireLocked(now, &fx) // a lock that has just expired is lost
	lock := q.lockDuration()
	limit := q.s.scale(MaxRenewal)
	for _, t := range tokens {
		if !wellFormed(t) {
			res.Failed = append(res.Failed, Failure{LockToken: t, Code: CodeBadRequest, Message: "This is not a lock token of this broker."})
			continue
		}
		e := q.tokens[t]
		if e == nil {
			res.Failed = append(res.Failed, Failure{LockToken: t, Code: CodeTokenLost, Message: "The lock is unknown, has expired, or its event was already settled."})
			continue
		}
		switch kind {
		case SettleAcknowledge:
			q.locks.remove(e)
			delete(q.tokens, t)
			e.state = gone
			fx.freed++
			fx.bytes += int64(len(e.body))
		case SettleRelease:
			q.unlockLocked(e, now, delay, &fx)
		case SettleReject:
			q.locks.remove(e)
			delete(q.tokens, t)
			q.finishLocked(e, ReasonRejected, &fx)
		case SettleRenewLock:
			end := e.lockedAt.Add(limit)
			if !now.Before(end) {
				res.Failed = append(res.Failed, Failure{LockToken: t, Code: CodeTokenLost, Message: "A lock can be renewed until one hour after the event was received; it cannot be renewed any more."})
				continue
			}
			e.lockUntil = now.Add(lock)
			if e.lockUntil.After(end) {
				e.lockUntil = end
			}
			q.locks.fix(e)
		}
		res.Succeeded = append(res.Succeeded, t)
	}
	q.armLocked(now)
	if fx.wake {
		q.wakeLocked()
	}
	sub := q.sub
	q.mu.Unlock()
	q.apply(sub, &fx)
	if n := len(res.Succeeded); n > 0 {
		q.s.opts.Metrics.Settled(sub, kind, n)
		if kind == SettleAcknowledge && q.s.opts.LogDeliverySuccess {
			q.s.log.Info().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", n).Msg("events acknowledged")
		}
	}
	return res
}

// close drops the queue's events, counted with reason, and ends its
// waiting receives.
func (q *queue) close(reason string) {
	var fx effects
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.closeReason = reason
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	n := q.nAvail + q.locks.Len() + q.delays.Len()
	var bytes int64
	for e := q.head; e != nil; e = e.next {
		bytes += int64(len(e.body))
	}
	for _, h := range []*timeHeap{&q.locks, &q.delays} {
		for _, e := range h.items {
			bytes += int64(len(e.body))
		}
	}
	q.head, q.tail, q.nAvail = nil, nil, 0
	q.tokens = map[string]*entry{}
	q.locks.items, q.delays.items, q.ttl.items = nil, nil, nil
	q.wakeLocked()
	sub := q.sub
	q.mu.Unlock()
	if n > 0 {
		fx.dropped = map[string]int{reason: n}
		fx.freed, fx.bytes = n, bytes
	}
	q.apply(sub, &fx)
}
