package outcome_test

import (
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// lineCounts counts the lines of msg, and the lines they and the summary
// lines account for.
func lineCounts(lines []map[string]any, msg string) (emitted, summaries, accounted int) {
	for _, l := range lines {
		n, _ := l["suppressed"].(float64)
		switch {
		case l["message"] == msg:
			emitted++
			accounted += 1 + int(n)
		case l["message"] == "log lines suppressed" && l["kind"] == msg:
			summaries++
			accounted += int(n)
		}
	}
	return emitted, summaries, accounted
}

// TestSub_RateLimit: a subscription's failure lines are limited to the
// burst per window; the rest are counted, on the next line or in a summary
// when the window ends or the subscription's reporter closes, after which
// nothing is limited.
func TestSub_RateLimit(t *testing.T) {
	clock := fakeclock.New()
	buf := &logbuf.Buffer{}
	rep := outcome.New(outcome.Options{DeliveryLogs: eventgrid.DeliveryLogs{LogDeliveryFailure: true},
		LogRateWindow: time.Minute, LogRateBurst: 2, Clock: clock}, zerolog.New(buf))
	sub := &eventgrid.EventSubscription{UID: 1, Topic: "t", Name: "s"}
	s := rep.For(sub)
	fail := func(n int) {
		for range n {
			s.Report(&outcome.Record{Kind: outcome.Attempted, Sub: sub, Time: clock.Now(), Events: 1, Failed: 1,
				Err: errors.New("no")})
		}
	}
	const msg = "delivery attempt failed"
	fail(5)
	if e, sum, acc := lineCounts(buf.Lines(t), msg); e != 2 || sum != 0 || acc != 2 {
		t.Fatalf("5 failures in a window of burst 2: %d lines, %d summaries, %d accounted; want 2, 0, 2", e, sum, acc)
	}
	clock.Advance(time.Minute)
	if e, sum, acc := lineCounts(buf.Lines(t), msg); e != 2 || sum != 1 || acc != 5 {
		t.Fatalf("at the window's end: %d lines, %d summaries, %d accounted; want 2, 1, 5", e, sum, acc)
	}
	fail(4)
	s.Close()
	if e, sum, acc := lineCounts(buf.Lines(t), msg); e != 4 || sum != 2 || acc != 9 {
		t.Fatalf("after Close: %d lines, %d summaries, %d accounted; want 4, 2, 9", e, sum, acc)
	}
	fail(3)
	if e, _, acc := lineCounts(buf.Lines(t), msg); e != 7 || acc != 12 {
		t.Fatalf("once closed: %d lines accounting for %d; want every one, 7 and 12", e, acc)
	}
}

// TestReporter_NoQueue: a record of a subscription without a queue is
// told to the metrics and the logs, unlimited; one given up on still
// reaches the dead-letter writer.
func TestReporter_NoQueue(t *testing.T) {
	buf := &logbuf.Buffer{}
	m := &records{n: map[string]map[string]int{}}
	dl := &letters{}
	rep := outcome.New(outcome.Options{DeliveryLogs: eventgrid.DeliveryLogs{LogEventExpiry: true}, Metrics: m, DeadLetterer: dl},
		zerolog.New(buf))
	sub := &eventgrid.EventSubscription{UID: 1, Topic: "t", Name: "s"}
	rep.Report(&outcome.Record{Kind: outcome.Discarded, Sub: sub, Reason: outcome.SubscriptionDeleted, Events: 3})
	rep.Report(&outcome.Record{Kind: outcome.GaveUp, Sub: sub, Reason: outcome.Rejected, Body: []byte(`{"id":"e"}`),
		DeadLettered: true, Done: func() {}})
	if got := m.of("s"); got["discarded"] != 3 || got["deadLettered"] != 1 {
		t.Errorf("metrics %v", got)
	}
	if dl.count() != 1 || !rep.DeadLetters() {
		t.Errorf("%d dead letters", dl.count())
	}
	lines := buf.Lines(t)
	if len(lines) != 2 || lines[0]["events"] != 3.0 || lines[1]["message"] != "event dead-lettered" || lines[1]["reason"] != "Rejected" {
		t.Errorf("lines %v", lines)
	}
}
