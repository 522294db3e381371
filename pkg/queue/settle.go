package queue

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/outcome"
)

// settle acknowledges, releases, rejects or renews the locks of tokens,
// token by token.
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
	// Most tokens settle: room for all of them.
	res.Succeeded = make([]string, 0, len(tokens))
	for _, t := range tokens {
		if f := q.settleLocked(t, kind, delay, now, &fx); f != nil {
			res.Failed = append(res.Failed, *f)
			continue
		}
		res.Succeeded = append(res.Succeeded, t)
	}
	q.armLocked(now)
	q.wakeLocked()
	sub := q.sub
	q.mu.Unlock()
	if n := len(res.Succeeded); n > 0 {
		q.out.Report(&outcome.Record{Kind: outcome.Settled, Sub: sub, Time: now, Events: n, Settlement: kind})
	}
	q.apply(sub, now, &fx)
	return res
}

// settleLocked settles the lock of one token, and returns why it failed,
// or nil.
func (q *queue) settleLocked(t, kind string, delay time.Duration, now time.Time, fx *effects) *Failure {
	e := q.tokens[t] // a token found is one made here: only others are checked
	if e == nil && !wellFormed(t) {
		return &Failure{LockToken: t, Code: CodeBadRequest, Message: "This is not a lock token of this broker."}
	}
	if e == nil {
		return &Failure{LockToken: t, Code: CodeTokenLost, Message: "The lock is unknown, has expired, or its event was already settled."}
	}
	switch kind {
	case SettleAcknowledge:
		q.locks.remove(e)
		delete(q.tokens, t)
		e.state = gone
		q.acknowledged(e, now)
		fx.acked.add(e)
		q.noteLocked(fx, e, nil, time.Time{})
	case SettleRelease:
		e.outcome = released
		fx.released.add(e)
		q.unlockLocked(e, now, delay, fx)
		switch e.state {
		case delayed:
			q.noteLocked(fx, e, errReleased, e.readyAt)
		case available:
			q.noteLocked(fx, e, errReleased, time.Time{})
		}
	case SettleReject:
		e.outcome = rejected
		q.locks.remove(e)
		delete(q.tokens, t)
		q.finishLocked(e, outcome.Rejected, now, fx)
	case SettleRenewLock:
		end := e.lockedAt.Add(q.s.scale(MaxRenewal))
		if !now.Before(end) {
			return &Failure{LockToken: t, Code: CodeTokenLost, Message: "A lock can be renewed until one hour after the event was received; it cannot be renewed any more."}
		}
		e.lockUntil = now.Add(q.lockDuration())
		if e.lockUntil.After(end) {
			e.lockUntil = end
		}
		q.locks.fix(e)
	}
	return nil
}
