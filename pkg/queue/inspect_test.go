package queue_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// outcomesOf reads the outcomes waiting in st as "outcome id attempt
// error".
func outcomesOf(t *testing.T, st *inspect.Stream) string {
	t.Helper()
	items, _, _ := st.Take(nil)
	var out []string
	for _, it := range items {
		var o struct {
			Outcome, EventID, Error, Reason, NextAttemptTime string
			Attempt                                          int
		}
		if err := json.Unmarshal(it.Data, &o); err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprintf("%s %s %d", o.Outcome, o.EventID, o.Attempt)
		for _, x := range []string{o.Error, o.Reason} {
			if x != "" {
				s += " " + x
			}
		}
		if o.NextAttemptTime != "" {
			s += " next"
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// TestStore_Inspection follows events of a queue subscription through what
// the inspection API shows: a peek that takes nothing, settlements and
// expired locks as outcomes and totals, retry now for a delayed event, and
// the events given up on.
func TestStore_Inspection(t *testing.T) {
	board := inspect.New(inspect.Options{MaxFailures: 10, MaxFailureBytes: 1 << 20})
	sub := queueSub(1, "q", 60, 2, time.Hour)
	f := newFixture(t, queue.Options{Board: board}, sub)
	rec := board.Subscription(sub.UID)
	watch := rec.Watch()
	defer watch.Close()
	start := f.clock.Now()
	f.mustPublish(3, sub)
	f.clock.Advance(time.Second)
	f.mustPublish(1, sub)

	got := f.receive(sub, 2) // events 1 and 2
	for range 2 {
		p, ok := f.store.Peek(sub, 10)
		if !ok || p.Total != 4 || len(p.Events) != 4 {
			t.Fatalf("peek = %+v, %v", p, ok)
		}
		var seen []string
		for _, w := range p.Events {
			seen = append(seen, fmt.Sprintf("%s:%s:%d", inspect.EventID(w.Body), w.Queue, w.Attempts))
		}
		if strings.Join(seen, " ") != "1:locked:1 2:locked:1 3:available:0 4:available:0" {
			t.Errorf("peek %v", seen)
		}
		if w := p.Events[0]; !w.Next.Equal(got[0].LockedUntil) || !w.Enqueued.Equal(start) {
			t.Errorf("a locked event: %+v", w)
		}
	}
	if c := f.counts(sub); c.Available != 2 || c.Locked != 2 {
		t.Errorf("counts after peeking %+v", c)
	}

	f.store.Acknowledge(sub, []string{got[0].LockToken})
	f.store.Release(sub, []string{got[1].LockToken}, 10*time.Second)
	if o := outcomesOf(t, watch); o != "delivered 1 1; failed 2 1 released by the receiver next" {
		t.Errorf("outcomes of an acknowledgement and a release: %s", o)
	}
	st, _ := f.store.Status(sub)
	if st.Waiting != 1 || !st.NextAttempt.Equal(f.clock.Now().Add(10*time.Second)) || !st.Oldest.Equal(start) {
		t.Errorf("status %+v", st)
	}
	if n, _, ok := f.store.RetryNow(sub); n != 1 || !ok {
		t.Errorf("RetryNow = %d, %v; want the delayed event", n, ok)
	}
	if c := f.counts(sub); c.Available != 3 || c.Delayed != 0 {
		t.Errorf("counts after retry now %+v", c)
	}

	got = f.receive(sub, 3) // 3, 4, then 2 (its second receive)
	f.clock.Advance(time.Minute)
	if o := outcomesOf(t, watch); !strings.Contains(o, "dropped 2 2 the lock expired before the event was settled MaxDeliveryCountExceeded") ||
		!strings.Contains(o, "failed 3 1 the lock expired before the event was settled") {
		t.Errorf("outcomes of expired locks: %s", o)
	}
	got = f.receive(sub, 1)
	f.store.Reject(sub, []string{got[0].LockToken})

	fs, total := rec.Failures(10)
	var gave []string
	for _, x := range fs {
		gave = append(gave, fmt.Sprintf("%s:%s:%d:%s", x.EventID, x.Reason, x.Attempts, x.LastError))
	}
	if total != 2 || strings.Join(gave, " ") != "3:Rejected:2:rejected by the receiver 2:MaxDeliveryCountExceeded:2:the lock expired before the event was settled" {
		t.Errorf("given up (%d): %v", total, gave)
	}
	tot := rec.Totals()
	if tot.Delivered != 1 || tot.FailedAttempts != 4 || tot.Dropped != 2 || tot.DeadLettered != 0 || !tot.LastSuccess.Equal(start.Add(time.Second)) {
		t.Errorf("totals %+v", tot)
	}
}
