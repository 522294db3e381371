package push_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// logLine is the part of a log line the tests look at.
type logLine struct {
	Message    string `json:"message"`
	Kind       string `json:"kind"`
	Suppressed int    `json:"suppressed"`
}

// tally counts, for one kind of line, the lines emitted, the summary lines
// and the lines they account for in all.
type tally struct {
	emitted, summaries, accounted int
}

func tallyOf(lines []logLine, msg string) tally {
	var t tally
	for _, l := range lines {
		switch {
		case l.Message == msg:
			t.emitted++
			t.accounted += 1 + l.Suppressed
		case l.Message == "log lines suppressed" && l.Kind == msg:
			t.summaries++
			t.accounted += l.Suppressed
		}
	}
	return t
}

const (
	msgFailed  = "delivery attempt failed"
	msgDropped = "event dropped by retry policy"
)

// mustFailingEngine returns an engine logging to buf whose subscription
// "s" fails every delivery and drops each event after one attempt, with the
// sender that counts the attempts.
func mustFailingEngine(tb testing.TB, o push.Options, buf *logbuf.Buffer) (*push.Engine, *eventgrid.EventSubscription, *sender, *metrics) {
	tb.Helper()
	o.LogDeliveryFailure, o.LogEventExpiry = true, true
	s := &sender{SendFn: func(context.Context, *push.Batch) error { return errFail }}
	m := newMetrics()
	e := push.New(o, s, m, zerolog.New(buf))
	tb.Cleanup(func() { _ = closeWithin(e, 5*time.Second) })
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) {
		s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 1}
	})
	return e, sub, s, m
}

func publishN(tb testing.TB, e *push.Engine, sub *eventgrid.EventSubscription, prefix string, n int) {
	tb.Helper()
	evs := make([]*eventgrid.Event, n)
	for i := range evs {
		evs[i] = newEvent(fmt.Sprintf("%s-%d", prefix, i), 64)
	}
	mustPublish(tb, e, []*eventgrid.EventSubscription{sub}, evs...)
}

func failures(s *sender) int {
	n := 0
	for _, b := range s.Calls() {
		if b.Err != nil {
			n++
		}
	}
	return n
}

func TestEngine_LogRateLimit(t *testing.T) {
	tests := []struct {
		name   string
		window time.Duration
		burst  int
		events int
		// maxLines bounds the lines emitted per kind, summaries included;
		// 0 means exactly one line per occurrence (no limit).
		maxLines int
	}{
		{name: "long window", window: time.Minute, burst: 10, events: 3000, maxLines: 11},
		{name: "default burst", window: time.Hour, events: 2000, maxLines: 11},
		{name: "no limit", window: time.Minute, burst: -1, events: 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fastOptions()
			o.LogRateWindow, o.LogRateBurst = tt.window, tt.burst
			buf := &logbuf.Buffer{}
			e, sub, s, m := mustFailingEngine(t, o, buf)
			publishN(t, e, sub, "ev", tt.events)
			brokertest.Eventually(t, 10*time.Second, func() error {
				if n := m.droppedN("s", outcome.MaxDeliveryAttemptsExceeded); n != tt.events {
					return fmt.Errorf("dropped %d of %d", n, tt.events)
				}
				return nil
			})
			closeWithin(e, 5*time.Second)
			lines := logbuf.Decode[logLine](t, buf)
			for _, k := range []struct {
				msg  string
				want int
			}{{msgFailed, failures(s)}, {msgDropped, tt.events}} {
				got := tallyOf(lines, k.msg)
				if got.accounted != k.want {
					t.Errorf("%q: lines and suppressed counts account for %d occurrences, want %d (%+v)", k.msg, got.accounted, k.want, got)
				}
				switch {
				case tt.maxLines == 0 && (got.emitted != k.want || got.summaries != 0):
					t.Errorf("%q: %+v, want %d lines and no summary", k.msg, got, k.want)
				case tt.maxLines > 0 && got.emitted+got.summaries > tt.maxLines:
					t.Errorf("%q: %d lines and %d summaries, want at most %d in all", k.msg, got.emitted, got.summaries, tt.maxLines)
				}
			}
		})
	}
}

func TestEngine_LogRateLimitWindow(t *testing.T) {
	t.Run("flushed when the window ends", func(t *testing.T) {
		o := fastOptions()
		o.LogRateWindow, o.LogRateBurst = 200*time.Millisecond, 3
		buf := &logbuf.Buffer{}
		e, sub, s, m := mustFailingEngine(t, o, buf)
		publishN(t, e, sub, "a", 100)
		// The summary comes from the window's end, not from Close.
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := m.droppedN("s", outcome.MaxDeliveryAttemptsExceeded); n != 100 {
				return fmt.Errorf("dropped %d of 100", n)
			}
			for _, msg := range []string{msgFailed, msgDropped} {
				if got := tallyOf(logbuf.Decode[logLine](t, buf), msg); got.accounted != 100 {
					return fmt.Errorf("%q: %+v accounts for %d of 100", msg, got, got.accounted)
				}
			}
			return nil
		})
		for _, msg := range []string{msgFailed, msgDropped} {
			if got := tallyOf(logbuf.Decode[logLine](t, buf), msg); got.summaries == 0 {
				t.Errorf("%q: no summary line before Close: %+v", msg, got)
			}
		}
		// A later window starts afresh.
		time.Sleep(o.LogRateWindow)
		publishN(t, e, sub, "b", 2)
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := m.droppedN("s", outcome.MaxDeliveryAttemptsExceeded); n != 102 {
				return fmt.Errorf("dropped %d of 102", n)
			}
			return nil
		})
		closeWithin(e, 5*time.Second)
		lines := logbuf.Decode[logLine](t, buf)
		for _, k := range []struct {
			msg  string
			want int
		}{{msgFailed, failures(s)}, {msgDropped, 102}} {
			if got := tallyOf(lines, k.msg); got.accounted != k.want {
				t.Errorf("%q: %+v accounts for %d occurrences, want %d", k.msg, got, got.accounted, k.want)
			}
		}
		if last := lines[len(lines)-2]; last.Message != msgDropped || last.Suppressed != 0 {
			t.Errorf("line of the fresh window = %+v, want %q without a suppressed count", last, msgDropped)
		}
	})
	t.Run("flushed when the subscription is deleted", func(t *testing.T) {
		o := fastOptions()
		o.LogRateWindow, o.LogRateBurst = time.Hour, 1
		buf := &logbuf.Buffer{}
		e, sub, _, m := mustFailingEngine(t, o, buf)
		publishN(t, e, sub, "a", 20)
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := m.droppedN("s", outcome.MaxDeliveryAttemptsExceeded); n != 20 {
				return fmt.Errorf("dropped %d of 20", n)
			}
			return nil
		})
		e.SubscriptionDeleted(sub)
		brokertest.Eventually(t, 5*time.Second, func() error {
			if got := tallyOf(logbuf.Decode[logLine](t, buf), msgDropped); got.accounted != 20 || got.emitted != 1 || got.summaries != 1 {
				return fmt.Errorf("%q after delete: %+v, want 1 line and 1 summary accounting for 20", msgDropped, got)
			}
			return nil
		})
	})
}
