package queue_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// TestPause: a paused queue subscription hands nothing out, a receive
// waits as it would on an empty queue, and resuming wakes it with the
// events that arrived meanwhile. The status says paused, how many
// receives wait and when the last came.
func TestPause(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	since, ok := f.store.Pause(sub, true)
	if !ok || !since.Equal(f.clock.Now()) {
		t.Fatalf("Pause = %v, %v", since, ok)
	}
	f.mustPublish(2, sub)
	if got := f.receive(sub, 10); len(got) != 0 {
		t.Fatalf("a paused subscription handed out %d events", len(got))
	}
	ch := make(chan []queue.Received, 1)
	go func() {
		got, _ := f.store.Receive(context.Background(), sub, 10, 30*time.Second)
		ch <- got
	}()
	waitForWaiter(t, f)
	f.mustPublish(1, sub) // wakes nobody while paused
	st, _ := f.store.Status(sub)
	if st.PausedSince != since || st.ReceiversWaiting != 1 || st.Ready != 3 || !st.LastReceive.Equal(f.clock.Now()) {
		t.Errorf("paused status %+v", st)
	}
	f.clock.Advance(time.Second)
	if since, _ := f.store.Pause(sub, false); !since.IsZero() {
		t.Errorf("resumed, still paused since %v", since)
	}
	if got := <-ch; len(got) != 3 {
		t.Errorf("the waiting receive got %d events on resume, want 3", len(got))
	}
}

// TestPurge: purge drops the available and delayed events, counted as
// dropped with the reason Purged, and leaves the locked ones to their
// receiver.
func TestPurge(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(4, sub)
	got := f.receive(sub, 2)
	f.store.Release(sub, tokens(got[:1]), 10*time.Second)
	if n, ok := f.store.Purge(sub); n != 3 || !ok {
		t.Fatalf("Purge = %d, %v; want the available and the delayed", n, ok)
	}
	if c := f.counts(sub); c.Available+c.Delayed != 0 || c.Locked != 1 {
		t.Errorf("after purge %+v", c)
	}
	if _, dropped := f.rec.snapshot(); dropped[outcome.Purged] != 3 {
		t.Errorf("dropped %v, want 3 Purged", dropped)
	}
	if res, _ := f.store.Acknowledge(sub, tokens(got[1:])); len(res.Succeeded) != 1 {
		t.Errorf("the locked event could not be acknowledged: %+v", res)
	}
	if used, _ := f.budget.Used(); used != 0 {
		t.Errorf("%d events still in the budget", used)
	}
}

// TestRetryNowAtLast: retry now says how many of the delayed events the
// next receive takes to their last delivery.
func TestRetryNowAtLast(t *testing.T) {
	sub := queueSub(1, "app", 60, 2, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(2, sub)
	got := f.receive(sub, 2)
	f.store.Release(sub, tokens(got), 10*time.Second)
	if moved, atLast, _ := f.store.RetryNow(sub); moved != 2 || atLast != 2 {
		t.Errorf("RetryNow = %d, %d at their last delivery; want 2 and 2", moved, atLast)
	}
}

// TestPeekKeepsARequestInOrder: one request's events show in their order
// whatever each's state: the first available again after a release, the
// second locked.
func TestPeekKeepsARequestInOrder(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(3, sub)
	got := f.receive(sub, 2)
	f.store.Release(sub, tokens(got[:1]), 0)
	p, _ := f.store.Peek(sub, 10)
	var seen []string
	for _, w := range p.Events {
		seen = append(seen, fmt.Sprintf("%s:%s:%d/%d", inspect.EventID(w.Body), w.Queue, w.Attempts, w.MaxAttempts))
	}
	if s := strings.Join(seen, " "); s != "1:available:1/10 2:locked:1/10 3:available:0/10" {
		t.Errorf("peek %s", s)
	}
}

// TestDeclaredPause: a declared queue subscription is paused as its
// declaration says, on creation and on every put.
func TestDeclaredPause(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	sub.Owner, sub.Paused = eventgrid.Owner{Source: eventgrid.SourceModuleTwin}, true
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(1, sub)
	if got := f.receive(sub, 10); len(got) != 0 {
		t.Fatal("a subscription declared paused handed out an event")
	}
	again := *sub
	again.Paused = false
	f.d.SubscriptionPut(&again)
	if got := f.receive(&again, 10); len(got) != 1 {
		t.Errorf("declared no longer paused: received %d", len(got))
	}
}
