package pull

import "github.com/edgegrid/edgegrid/pkg/eventgrid"

// effects are what a change under the queue's lock leaves to do after it.
type effects struct {
	letters []eventgrid.DeadLetter
	dropped map[string]int
	expired int // locks that expired unsettled
	// requeued is how many of the expired locks' events are available
	// again; the others were past their delivery count or time to live.
	requeued int
}

func (fx *effects) drop(reason string) {
	if fx.dropped == nil {
		fx.dropped = map[string]int{}
	}
	fx.dropped[reason]++
}

// apply does fx's work. sub is the subscription as it was under the lock.
func (q *queue) apply(sub *eventgrid.EventSubscription, fx *effects) {
	m := q.s.opts.Metrics
	if fx.expired > 0 {
		m.LockExpired(sub, fx.expired)
		if q.s.opts.LogDeliveryFailure {
			// The events not available again have lines of their own,
			// dead-lettered or dropped.
			q.s.log.Info().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", fx.expired).
				Int("availableAgain", fx.requeued).Msg("locks expired unsettled")
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
