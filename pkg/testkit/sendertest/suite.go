package sendertest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// Features are what a sender's protocol has, and so what the suite checks.
type Features struct {
	// Statuses: the destination answers each request with an HTTP status,
	// and a failed Send reports it as a push.StatusError.
	Statuses bool
	// RetryAfter: a Retry-After header (delay-seconds or an HTTP date) on a
	// 429 or 503 answer reaches the engine as a push.RetryAfterError.
	RetryAfter bool
}

// Counterpart is what a sender's test sets up for one test of the suite: the
// sender, and a real destination it delivers to.
type Counterpart struct {
	Sender push.Sender
	// Subscription delivers to the destination. The suite sends all of a
	// test's batches to it.
	Subscription *eventgrid.EventSubscription
	// Received returns the event bodies the destination has accepted so
	// far, in the order it accepted them.
	Received func(tb testing.TB) [][]byte
	// Fail makes the destination answer its next request with status and,
	// when retryAfter is not empty, a Retry-After header. It is needed
	// only with Features.Statuses.
	Fail func(status int, retryAfter string)
	// Hang makes the destination stop answering, for the rest of the test:
	// requests, or acknowledgements, never come back.
	Hang func()
}

// Constructor sets up a new Counterpart for one test; what it starts stops
// when t ends.
type Constructor func(t *testing.T) Counterpart

// waitFor bounds how long the suite waits for the destination to show what
// it accepted, and for Send to return once its context has ended. Both
// happen in milliseconds; the bound is for machines under load.
const waitFor = 20 * time.Second

// TestSender runs the contract every push.Sender keeps against the
// counterparts newCounterpart sets up, one per test.
func TestSender(t *testing.T, f Features, newCounterpart Constructor) {
	t.Run("Delivers", func(t *testing.T) { testDelivers(t, newCounterpart(t)) })
	if f.Statuses {
		t.Run("StatusErrors", func(t *testing.T) { testStatusErrors(t, newCounterpart(t)) })
	}
	if f.RetryAfter {
		t.Run("RetryAfter", func(t *testing.T) { testRetryAfter(t, newCounterpart(t)) })
	}
	t.Run("ReturnsWhenTheContextEnds", func(t *testing.T) { testContextEnds(t, newCounterpart(t)) })
	t.Run("SendsNothingWhenTheContextIsDone", func(t *testing.T) { testContextDone(t, newCounterpart(t)) })
	t.Run("KeepsNothingOfTheBatch", func(t *testing.T) { testKeepsNothing(t, newCounterpart(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newCounterpart(t)) })
}

// event returns the body of an event named id, of the EventGridSchema
// shape every destination accepts.
func event(id string) []byte {
	return []byte(`{"id":"` + id + `","topic":"t","subject":"s/` + id + `","eventType":"T","eventTime":"2024-01-01T00:00:00Z","data":{"n":"` + id + `"},"dataVersion":"1","metadataVersion":"1"}`)
}

func batchOf(sub *eventgrid.EventSubscription, ids ...string) *push.Batch {
	b := &push.Batch{Subscription: sub}
	for _, id := range ids {
		b.Bodies = append(b.Bodies, event(id))
	}
	return b
}

// send makes one Send with a context of the engine's kind: a deadline.
func send(c Counterpart, b *push.Batch) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	return c.Sender.Send(ctx, b)
}

// mustReceive waits until the destination has accepted exactly want (in
// any order when unordered), and fails tb as soon as it has accepted
// anything else.
func mustReceive(tb testing.TB, c Counterpart, unordered bool, want ...[]byte) {
	tb.Helper()
	brokertest.Eventually(tb, waitFor, func() error {
		got := c.Received(tb)
		if len(got) < len(want) {
			return fmt.Errorf("received %d events, want %d", len(got), len(want))
		}
		if err := sameBodies(got, want, unordered); err != nil {
			tb.Fatal(err)
		}
		return nil
	})
}

func sameBodies(got, want [][]byte, unordered bool) error {
	if unordered {
		got, want = slices.Clone(got), slices.Clone(want)
		slices.SortFunc(got, bytes.Compare)
		slices.SortFunc(want, bytes.Compare)
	}
	if !slices.EqualFunc(got, want, bytes.Equal) {
		return fmt.Errorf("received\n%s\nwant\n%s", bytes.Join(got, []byte("\n")), bytes.Join(want, []byte("\n")))
	}
	return nil
}

// testDelivers: a batch arrives whole, in order, and Send leaves it as it
// was given.
func testDelivers(t *testing.T, c Counterpart) {
	b := batchOf(c.Subscription, "1", "2", "3")
	want := slices.Clone(b.Bodies)
	if err := send(c, b); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := sameBodies(b.Bodies, want, false); err != nil {
		t.Errorf("Send changed the batch: %v", err)
	}
	mustReceive(t, c, false, want...)
}

// statusOnly is the plainest push.StatusError: what the engine makes
// of it is what it must make of every sender's error with that status.
type statusOnly int

func (s statusOnly) Error() string   { return http.StatusText(int(s)) }
func (s statusOnly) StatusCode() int { return int(s) }

// testStatusErrors: a failure status reaches the engine as that status,
// and classifies as it would from any sender; nothing is delivered.
func testStatusErrors(t *testing.T, c Counterpart) {
	for _, status := range []int{400, 401, 403, 404, 408, 413, 429, 500, 503} {
		c.Fail(status, "")
		err := send(c, batchOf(c.Subscription, fmt.Sprint("failed-", status)))
		got, want := push.Classify(err), push.Classify(statusOnly(status))
		if err == nil || got.StatusCode != status || got.Outcome != want.Outcome {
			t.Errorf("answered %d: Send = %v, classified %+v; want status %d, outcome %s", status, err, got, status, want.Outcome)
		}
	}
	if err := send(c, batchOf(c.Subscription, "after")); err != nil {
		t.Fatalf("Send after the failures: %v", err)
	}
	mustReceive(t, c, false, event("after"))
}

// testRetryAfter: a Retry-After on 429 and 503, in seconds or as a date,
// reaches the engine.
func testRetryAfter(t *testing.T, c Counterpart) {
	at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, tt := range []struct {
		status      int
		header      string
		least, most time.Duration
	}{
		{503, "7", 7 * time.Second, 7 * time.Second},
		{429, "120", 2 * time.Minute, 2 * time.Minute},
		{503, at, 80 * time.Second, 91 * time.Second},
		{503, "", 0, 0},
	} {
		c.Fail(tt.status, tt.header)
		r := push.Classify(send(c, batchOf(c.Subscription, "busy")))
		if r.StatusCode != tt.status || r.RetryAfter < tt.least || r.RetryAfter > tt.most {
			t.Errorf("%d with Retry-After %q: classified %+v, want a wait of %v to %v", tt.status, tt.header, r, tt.least, tt.most)
		}
	}
}

// testContextEnds: with the destination hung, Send returns once its
// context ends, as a timeout.
func testContextEnds(t *testing.T, c Counterpart) {
	if err := send(c, batchOf(c.Subscription, "warm")); err != nil {
		t.Fatalf("Send before the hang: %v", err)
	}
	c.Hang()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Sender.Send(ctx, batchOf(c.Subscription, "hung")) }()
	select {
	case err := <-done:
		if r := push.Classify(err); err == nil || r.Outcome != push.OutcomeTimedOut {
			t.Errorf("Send to a hung destination = %v, classified %+v; want a timeout", err, r)
		}
	case <-time.After(waitFor):
		t.Fatalf("Send did not return %v after its context ended", waitFor)
	}
}

// testContextDone: a Send whose context has already ended sends nothing,
// even with a connection open and ready. What follows on the same
// destination shows it: had it been sent, it would have arrived before.
func testContextDone(t *testing.T, c Counterpart) {
	if err := send(c, batchOf(c.Subscription, "warm")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sender.Send(ctx, batchOf(c.Subscription, "cancelled")); err == nil {
		t.Error("Send with a done context reported success")
	}
	if err := send(c, batchOf(c.Subscription, "next")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	mustReceive(t, c, false, event("warm"), event("next"))
}

// testKeepsNothing: once Send returns the engine reuses the batch; what
// it then writes there never reaches the destination.
func testKeepsNothing(t *testing.T, c Counterpart) {
	b := batchOf(c.Subscription, "1", "2")
	want := slices.Clone(b.Bodies)
	b.Bodies = [][]byte{bytes.Clone(want[0]), bytes.Clone(want[1])}
	if err := send(c, b); err != nil {
		t.Fatalf("Send: %v", err)
	}
	for _, body := range b.Bodies {
		copy(body, bytes.Repeat([]byte("x"), len(body)))
	}
	b.Bodies[0], b.Bodies[1] = event("reused"), nil
	b.Subscription = nil
	if err := send(c, batchOf(c.Subscription, "3")); err != nil {
		t.Fatalf("Send: %v", err)
	}
	mustReceive(t, c, false, want[0], want[1], event("3"))
}

// testConcurrent: Sends from many goroutines at once all arrive.
func testConcurrent(t *testing.T, c Counterpart) {
	const goroutines, each = 8, 4
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	var want [][]byte
	for g := range goroutines {
		for i := range each {
			want = append(want, event(fmt.Sprint(g, "-", i)))
		}
		wg.Go(func() {
			for i := range each {
				if err := send(c, batchOf(c.Subscription, fmt.Sprint(g, "-", i))); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Send: %v", err)
	}
	mustReceive(t, c, true, want...)
}
