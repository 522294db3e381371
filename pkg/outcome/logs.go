package outcome

import (
	"sync"
	"time"

	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// logKind is a kind of rate-limited log line.
type logKind uint8

// The rate-limited kinds of log lines.
const (
	logFailure      logKind = iota // an attempt that failed
	logDropped                     // an event its retry policy gave up on, dropped
	logDeadLettered                // an event given up on, dead-lettered
	logRejected                    // an event its receiver rejected, dropped
	numLogKinds
)

// logMessages are the messages of the rate-limited lines, by kind.
var logMessages = [numLogKinds]string{
	logFailure:      "delivery attempt failed",
	logDropped:      "event dropped by retry policy",
	logDeadLettered: "event dead-lettered",
	logRejected:     "event rejected and dropped",
}

// Sub is the reporter of one subscription's records: it tells them to the
// subscription's record on the board, and rate-limits their log lines. A
// delivery mode makes one with Reporter.For when it makes the
// subscription's queue, and closes it when the queue goes. Its methods are
// safe for concurrent use.
type Sub struct {
	r           *Reporter
	rec         *inspect.Sub
	topic, name string

	mu     sync.Mutex
	logs   [numLogKinds]limiter
	timer  clock.Timer // flushes suppressed counts when a window ends
	closed bool
}

// Report tells rec, a record of the subscription, to every sink.
func (s *Sub) Report(rec *Record) { s.r.report(s, rec) }

// Watching reports whether anyone watches the subscription's outcomes
// (one atomic load): only then does a mode collect Record.Outcomes.
func (s *Sub) Watching() bool { return s.rec.Watching() }

// Close logs the counts of lines still suppressed and stops the window
// timer: the subscription's queue is gone. Its lines after that (of
// requests that were in flight) are not limited. Later calls do nothing.
func (s *Sub) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
	var counts [numLogKinds]int
	for k := range s.logs {
		counts[k] = s.logs[k].take()
	}
	s.mu.Unlock()
	s.logSuppressed(&counts)
}

// allow applies the rate limit of kind at now, and returns whether the
// line may be written and how many lines of its kind were suppressed
// since the last one. A nil Sub (no queue) is not limited.
func (s *Sub) allow(kind logKind, now time.Time) (ok bool, suppressed int) {
	if s == nil {
		return true, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.logs[kind]
	if s.closed {
		return true, l.take()
	}
	o := &s.r.opts
	ok, suppressed = l.allow(now.UnixNano(), o.LogRateWindow, o.LogRateBurst)
	if !ok && l.suppressed == 1 {
		s.armLocked(now)
	}
	return ok, suppressed
}

// armLocked sets the timer for the earliest window end at which a
// suppressed count is pending.
func (s *Sub) armLocked(now time.Time) {
	var next int64
	for i := range s.logs {
		if at, ok := s.logs[i].due(s.r.opts.LogRateWindow); ok && (next == 0 || at < next) {
			next = at
		}
	}
	if next == 0 || s.closed {
		return
	}
	d := time.Duration(next - now.UnixNano())
	if s.timer == nil {
		s.timer = s.r.opts.Clock.AfterFunc(d, s.onTimer)
		return
	}
	s.timer.Reset(d)
}

// onTimer logs the suppressed counts of the windows that ended.
func (s *Sub) onTimer() {
	var counts [numLogKinds]int
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return // Close took the counts
	}
	now := s.r.opts.Clock.Now()
	for k := range s.logs {
		if at, ok := s.logs[k].due(s.r.opts.LogRateWindow); ok && at <= now.UnixNano() {
			counts[k] = s.logs[k].take()
		}
	}
	s.armLocked(now)
	s.mu.Unlock()
	s.logSuppressed(&counts)
}

// logSuppressed writes a summary line for each kind with lines suppressed.
func (s *Sub) logSuppressed(counts *[numLogKinds]int) {
	for k, n := range counts {
		if n > 0 {
			s.r.log.Warn().Str("topic", s.topic).Str("subscription", s.name).Str("kind", logMessages[k]).
				Int("suppressed", n).Msg("log lines suppressed")
		}
	}
}

// limiter rate-limits one kind of log line of one subscription with fixed
// windows: a window opens with the first line after the previous one
// ended, and at most burst lines are emitted in it; the rest are counted
// as suppressed. The count is reported on the next line emitted or, if
// none comes, flushed in a summary line once the window ends. Its Sub's
// mutex guards it; it never allocates.
type limiter struct {
	start      int64 // window start, Unix nanoseconds; 0 before the first line
	emitted    int   // lines emitted in the window
	suppressed int   // lines suppressed since the last line emitted or flushed
}

// allow decides whether a line may be emitted at now. If so, it returns the
// number of lines suppressed since the last line emitted or flushed, and
// resets that count. burst < 0 means no limit.
func (l *limiter) allow(now int64, window time.Duration, burst int) (ok bool, suppressed int) {
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
func (l *limiter) due(window time.Duration) (at int64, ok bool) {
	if l.suppressed == 0 {
		return 0, false
	}
	return l.start + int64(window), true
}

// take returns the suppressed count and resets it.
func (l *limiter) take() int {
	n := l.suppressed
	l.suppressed = 0
	return n
}
