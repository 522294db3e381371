package delivery

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// logKind is a kind of per-subscription log line that is rate-limited.
type logKind int

// The rate-limited kinds of log lines.
const (
	logFailure    logKind = iota // "delivery attempt failed"
	logExpiry                    // "event dropped by retry policy"
	logDeadLetter                // "event dead-lettered"
	numLogKinds
)

// logMessages are the messages of the rate-limited lines, by kind.
var logMessages = [numLogKinds]string{
	logFailure:    "delivery attempt failed",
	logExpiry:     "event dropped by retry policy",
	logDeadLetter: "event dead-lettered",
}

// logLimiter rate-limits one kind of log line of one subscription with fixed
// windows: a window opens with the first line after the previous one ended,
// and at most burst lines are emitted in it; the rest are counted as
// suppressed. The count is reported on the next line emitted or, if none
// comes, flushed in a summary line once the window ends.
//
// It has no lock of its own: its queue's mutex guards it. It never
// allocates.
type logLimiter struct {
	start      int64 // window start, Unix nanoseconds; 0 before the first line
	emitted    int   // lines emitted in the window
	suppressed int   // lines suppressed since the last line emitted or flushed
}

// allow decides whether a line may be emitted at now. If so, it returns the
// number of lines suppressed since the last line emitted or flushed, and
// resets that count. burst < 0 means no limit.
func (l *logLimiter) allow(now int64, window time.Duration, burst int) (ok bool, suppressed int) {
	if burst < 0 {
		return true, l.take()
	}
	if l.start == 0 || now-l.start >= int64(window) {
		l.start, l.emitted = now, 0
	}
	if l.emitted < burst {
		l.emitted++
		return true, l.take()
	}
	l.suppressed++
	return false, 0
}

// due returns when the suppressed count must be flushed: the end of the
// window. ok is false when nothing is suppressed.
func (l *logLimiter) due(window time.Duration) (at int64, ok bool) {
	if l.suppressed == 0 {
		return 0, false
	}
	return l.start + int64(window), true
}

// take returns the suppressed count and resets it.
func (l *logLimiter) take() int {
	n := l.suppressed
	l.suppressed = 0
	return n
}

// allowLogLocked applies the rate limit of kind at now. When a line is
// suppressed it makes sure a flush is scheduled for the window's end. A
// discarded queue is not limited: only the batches still in flight when it
// was discarded can log, at most MaxPerSubscription of them.
func (q *queue) allowLogLocked(kind logKind, now time.Time) (ok bool, suppressed int) {
	l := &q.logs[kind]
	if q.closed {
		return true, l.take()
	}
	o := &q.e.opts
	ok, suppressed = l.allow(now.UnixNano(), o.LogRateWindow, o.LogRateBurst)
	if !ok && l.suppressed == 1 {
		q.armLogTimerLocked(now)
	}
	return ok, suppressed
}

// armLogTimerLocked sets the log timer for the earliest window end at which
// a suppressed count is pending.
func (q *queue) armLogTimerLocked(now time.Time) {
	var next int64
	for i := range q.logs {
		if at, ok := q.logs[i].due(q.e.opts.LogRateWindow); ok && (next == 0 || at < next) {
			next = at
		}
	}
	if next == 0 || q.closed || q.stopped {
		return
	}
	d := time.Duration(next - now.UnixNano())
	if q.logTimer == nil {
		q.logTimer = q.e.clock.AfterFunc(d, q.onLogTimer)
		return
	}
	q.logTimer.Reset(d)
}

// onLogTimer flushes the suppressed counts of the windows that ended.
func (q *queue) onLogTimer() {
	var flush taken
	q.mu.Lock()
	if q.closed || q.stopped {
		q.mu.Unlock()
		return // detach took the counts
	}
	now := q.e.clock.Now()
	flush.Subscription = q.sub
	for k := range q.logs {
		if at, ok := q.logs[k].due(q.e.opts.LogRateWindow); ok && at <= now.UnixNano() {
			flush.notes = append(flush.notes, note{kind: noteSuppressed, logKind: logKind(k), suppressed: q.logs[k].take()})
		}
	}
	q.armLogTimerLocked(now)
	q.mu.Unlock()
	flush.flush(q.e)
}

// logSuppressed writes the summary line of n suppressed lines of kind.
func logSuppressed(e *Engine, sub *eventgrid.EventSubscription, kind logKind, n int) {
	e.log.Warn().Str("topic", sub.Topic).Str("subscription", sub.Name).Str("kind", logMessages[kind]).
		Int("suppressed", n).Msg("log lines suppressed")
}
