package delivery

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// noteKind is a kind of log line a worker writes after releasing the
// queue's lock.
type noteKind uint8

const (
	noteDelivered noteKind = iota
	noteFailed
	noteDropped
	noteDeadLettered
	noteSuppressed
)

// note is one log line decided under the queue's lock and written after.
type note struct {
	kind       noteKind
	events     int
	attempt    int
	err        error
	body       []byte // noteDropped, noteDeadLettered: the event, for its id
	reason     DropReason
	age        time.Duration
	suppressed int
	logKind    logKind // noteSuppressed
}

// flush writes b's notes, reports its drop counts and hands its dead
// letters over, then forgets them. It runs with no lock held.
func (b *taken) flush(e *Engine) {
	sub := b.Subscription
	for i := range b.notes {
		n := &b.notes[i]
		switch n.kind {
		case noteDelivered:
			e.log.Info().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", n.events).
				Int("deliveryCount", n.attempt).Msg("delivered")
		case noteFailed:
			l := e.log.Warn().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", n.events).
				Int("attempt", n.attempt).Err(n.err)
			if n.suppressed > 0 {
				l = l.Int("suppressed", n.suppressed)
			}
			l.Msg(logMessages[logFailure])
		case noteDropped, noteDeadLettered:
			l := e.log.Warn().Str("topic", sub.Topic).Str("subscription", sub.Name).Str("eventId", inspect.EventID(n.body)).
				Str("reason", string(n.reason)).Int("attempts", n.attempt).Float64("ageSeconds", n.age.Seconds())
			if n.suppressed > 0 {
				l = l.Int("suppressed", n.suppressed)
			}
			if n.kind == noteDeadLettered {
				l.Msg(logMessages[logDeadLetter])
			} else {
				l.Msg(logMessages[logExpiry])
			}
		case noteSuppressed:
			logSuppressed(e, sub, n.logKind, n.suppressed)
		}
	}
	clear(b.notes)
	b.notes = b.notes[:0]
	for _, d := range b.drops {
		e.metrics.Dropped(sub, d.reason, d.n)
	}
	b.drops = b.drops[:0]
	if d := e.opts.DeadLetterer; d != nil {
		for _, l := range b.letters {
			e.metrics.DeadLettered(l.Subscription, l.Reason, 1)
			d.DeadLetter(l)
		}
	}
	clear(b.letters)
	b.letters = b.letters[:0]
	b.report()
}
