package pull

import "time"

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
			q.release(e)
		case SettleRelease:
			e.outcome = released
			q.unlockLocked(e, now, delay, &fx)
		case SettleReject:
			e.outcome = rejected
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
	q.wakeLocked()
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
