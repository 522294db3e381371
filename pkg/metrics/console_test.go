package metrics_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// byMessage groups log lines by message.
func byMessage(lines []map[string]any) map[string][]map[string]any {
	m := map[string][]map[string]any{}
	for _, l := range lines {
		msg, _ := l["message"].(string)
		m[msg] = append(m[msg], l)
	}
	return m
}

func TestConsole_Report(t *testing.T) {
	buf := &logbuf.Buffer{}
	c := metrics.NewConsole(time.Hour, zerolog.New(buf))
	s1, _, _ := scenario(c.Prometheus)
	c.Collect(func() push.Stats {
		return push.Stats{InFlight: 1, Queues: []push.QueueStats{
			{Subscription: s1, Ready: 1, Backoff: [2]int{2, 1}},
		}}
	})
	c.CollectHeld(func() dispatch.Holdings { return dispatch.Holdings{Events: 4, Bytes: 400} })

	c.Report()
	first := byMessage(buf.Take(t))
	tests := []struct {
		name  string
		msg   string
		match map[string]any // fields identifying the line
		want  map[string]any
	}{
		{"topic", "topic metrics", map[string]any{"topic": "T1"}, map[string]any{
			"eventsReceived": 5.0, "unmatchedEvents": 1.0, "successRequests": 2.0, "userErrorRequests": 2.0,
			"systemErrorRequests": 1.0, "successRequestLatencyMsMean": 3.0,
		}},
		{"subscription", "subscription metrics", map[string]any{"topic": "T1", "subscription": "s1"}, map[string]any{
			"deliverySuccessCounts": 3.0, "deliveryFailureCounts": 1.0, "deliveryAttemptsCount": 4.0,
			"expiredCounts": 3.0, "deliverySuccessLatencyMsMean": 15.0, "systemDelayForFirstAttemptMsMean": 6.0,
			"dropped":    map[string]any{"TimeToLiveExceeded": 1.0, "MaxDeliveryAttemptsExceeded": 2.0, "Shutdown": 3.0},
			"queueReady": 1.0, "queueBackoff1": 2.0, "queueBackoff2": 1.0,
		}},
		{"broker", "broker metrics", nil, map[string]any{
			"queuedEvents": 4.0, "queuedBytes": 400.0, "deliveriesInFlight": 1.0,
			"backoffQueue1": 2.0, "backoffQueue2": 1.0, "publishRejected": 3.0,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var line map[string]any
		lines:
			for _, l := range first[tt.msg] {
				for k, v := range tt.match {
					if l[k] != v {
						continue lines
					}
				}
				line = l
			}
			if line == nil {
				t.Fatalf("no %q line matching %v in %v", tt.msg, tt.match, first)
			}
			for k, want := range tt.want {
				if got := line[k]; !equalJSON(got, want) {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
		})
	}
	t.Run("subscriptions without activity are left out", func(t *testing.T) {
		for _, l := range first["subscription metrics"] {
			if l["subscription"] == "s3" {
				t.Errorf("line for idle subscription s3: %v", l)
			}
		}
	})

	t.Run("the next report counts the interval only", func(t *testing.T) {
		c.Published("T1", http.StatusOK, time.Millisecond, 2, 0)
		c.Report()
		next := byMessage(buf.Take(t))
		if got := len(next["topic metrics"]); got != 1 {
			t.Fatalf("%d topic lines, want 1 (T1): %v", got, next["topic metrics"])
		}
		if l := next["topic metrics"][0]; l["topic"] != "T1" || l["eventsReceived"] != 2.0 || l["userErrorRequests"] != 0.0 {
			t.Errorf("topic line %v, want T1 with eventsReceived 2 and no errors", l)
		}
		// s1 still has queued events; s2 had no activity.
		if got := len(next["subscription metrics"]); got != 1 || next["subscription metrics"][0]["subscription"] != "s1" {
			t.Errorf("subscription lines %v, want only s1 (queued events)", next["subscription metrics"])
		} else if l := next["subscription metrics"][0]; l["deliveryAttemptsCount"] != 0.0 || l["dropped"] != nil {
			t.Errorf("s1 line %v, want no activity", l)
		}
		if got := len(next["broker metrics"]); got != 1 {
			t.Errorf("%d broker lines, want 1", got)
		}
	})
}

func equalJSON(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		return a == b
	}
	if len(am) != len(bm) {
		return false
	}
	for k, v := range am {
		if !equalJSON(v, bm[k]) {
			return false
		}
	}
	return true
}

func TestConsole_Lifecycle(t *testing.T) {
	t.Run("reports every interval", func(t *testing.T) {
		buf := &logbuf.Buffer{}
		c := metrics.NewConsole(10*time.Millisecond, zerolog.New(buf))
		t.Cleanup(func() { c.Close(context.Background()) })
		if err := c.Run(context.Background()); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if err := c.Run(context.Background()); err == nil {
			t.Errorf("second Run: no error")
		}
		c.Published("t", http.StatusOK, time.Millisecond, 1, 0)
		deadline := time.Now().Add(5 * time.Second)
		reports, received := 0, 0.0
		for (reports < 3 || received == 0) && time.Now().Before(deadline) {
			lines := byMessage(buf.Take(t))
			reports += len(lines["broker metrics"])
			for _, l := range lines["topic metrics"] {
				received += l["eventsReceived"].(float64)
			}
			time.Sleep(5 * time.Millisecond)
		}
		if reports < 3 || received != 1 {
			t.Fatalf("%d reports and %v events received within 5s, want 3 and 1", reports, received)
		}
	})
	t.Run("Close reports the rest", func(t *testing.T) {
		buf := &logbuf.Buffer{}
		c := metrics.NewConsole(time.Hour, zerolog.New(buf))
		if err := c.Run(context.Background()); err != nil {
			t.Fatalf("Run: %v", err)
		}
		c.Published("t", http.StatusOK, time.Millisecond, 4, 0)
		if err := c.Close(context.Background()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		lines := byMessage(buf.Take(t))["topic metrics"]
		if len(lines) != 1 || lines[0]["eventsReceived"] != 4.0 {
			t.Errorf("topic lines after Close: %v, want one with eventsReceived 4", lines)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if got := buf.Take(t); len(got) != 0 {
			t.Errorf("lines after the second Close: %v", got)
		}
		if err := c.Run(context.Background()); err == nil {
			t.Errorf("Run after Close: no error")
		}
	})
	t.Run("stops with its context", func(t *testing.T) {
		c := metrics.NewConsole(5*time.Millisecond, zerolog.Nop())
		ctx, cancel := context.WithCancel(context.Background())
		if err := c.Run(ctx); err != nil {
			t.Fatalf("Run: %v", err)
		}
		cancel()
		done := make(chan struct{})
		go func() { c.Close(context.Background()); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not return after the context was cancelled")
		}
	})
}

// TestConsole_QueueSubscription: a queue subscription's line has the
// counts both delivery modes share, its settlements and expired locks, and
// its queue's gauges instead of the push lists.
func TestConsole_QueueSubscription(t *testing.T) {
	buf := &logbuf.Buffer{}
	c := metrics.NewConsole(time.Hour, zerolog.New(buf))
	q := queueSub(9, "t", "q")
	c.SubscriptionPut(q)
	c.Record(outcome.Record{Kind: outcome.Started, Sub: q, Events: 3})
	c.Record(outcome.Record{Kind: outcome.Attempted, Sub: q, Events: 2, Failed: 2, Expired: 2, Latency: -1})
	c.Record(outcome.Record{Kind: outcome.Settled, Sub: q, Events: 1, Settlement: "acknowledge"})
	drop(c.Prometheus, q, outcome.Rejected, 1)
	deadLetter(c.Prometheus, q, outcome.MaxDeliveryCountExceeded)
	c.CollectQueues(func() []queue.SubscriptionCounts {
		return []queue.SubscriptionCounts{{Subscription: q, Counts: queue.Counts{Available: 4, Locked: 1}}}
	})
	c.Report()
	lines := byMessage(buf.Take(t))["subscription metrics"]
	if len(lines) != 1 {
		t.Fatalf("subscription lines %v, want one for q", lines)
	}
	want := map[string]any{
		"deliveryAttemptsCount": 3.0, "deliveryFailureCounts": 2.0, "expiredCounts": 0.0, "locksExpired": 2.0,
		"settled": map[string]any{"acknowledge": 1.0}, "dropped": map[string]any{"Rejected": 1.0},
		"deadLettered": map[string]any{"MaxDeliveryCountExceeded": 1.0}, "queueAvailable": 4.0, "queueLocked": 1.0,
	}
	for k, v := range want {
		if got := lines[0][k]; !equalJSON(got, v) {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	if _, ok := lines[0]["queueReady"]; ok {
		t.Errorf("a queue subscription's line has the push lists: %v", lines[0])
	}
}
