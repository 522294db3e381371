package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// answer is what a receive running in its own goroutine returned.
type answer struct {
	got []queue.Received
	err error
}

// waitingReceive starts a receive of up to max events that waits up to
// wait, and returns where its answer will arrive once it is waiting.
func (f *fixture) waitingReceive(sub *eventgrid.EventSubscription, max int, wait time.Duration) <-chan answer {
	f.t.Helper()
	before := f.counts(sub).Waiting
	ch := make(chan answer, 1)
	go func() {
		got, err := f.store.Receive(context.Background(), sub, max, wait)
		ch <- answer{got, err}
	}()
	f.waitFor(sub, before+1)
	return ch
}

// waitFor waits until n receives wait on sub.
func (f *fixture) waitFor(sub *eventgrid.EventSubscription, n int) {
	f.t.Helper()
	brokertest.Eventually(f.t, 5*time.Second, func() error {
		if c := f.counts(sub); c.Waiting != n {
			return fmt.Errorf("%d receives waiting, want %d", c.Waiting, n)
		}
		return nil
	})
}

// next returns the first answer of chs to arrive, and which one it was.
func next(t *testing.T, chs ...<-chan answer) (answer, int) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		for i, ch := range chs {
			select {
			case a := <-ch:
				return a, i
			default:
			}
		}
		select {
		case <-deadline:
			t.Fatal("no waiting receive answered within 5 s")
		case <-time.After(time.Millisecond):
		}
	}
}

// TestWake_ReceiveThatMakesEventsAvailable: two receives wait; a delayed
// release of two events becomes due, and a receive of one event notices it
// before the queue's timer has run. It takes one event and wakes a waiting
// receive for the other, which does not wait for its maxWaitTime.
func TestWake_ReceiveThatMakesEventsAvailable(t *testing.T) {
	sub := queueSub(1, "app", 300, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	bodies := f.mustPublish(2, sub)
	if res, err := f.store.Release(sub, tokens(f.receive(sub, 2)), 10*time.Second); err != nil || len(res.Succeeded) != 2 {
		t.Fatalf("release: %+v %v", res, err)
	}
	a := f.waitingReceive(sub, 1, time.Minute)
	b := f.waitingReceive(sub, 1, time.Minute)

	f.clock.Skip(10 * time.Second) // the delay has passed; the timer has not run
	third := f.receive(sub, 1)
	if len(third) != 1 || string(third[0].Body) != bodies[0] {
		t.Fatalf("the receive of one event got %d events; want the first released", len(third))
	}
	woken, i := next(t, a, b)
	if woken.err != nil || len(woken.got) != 1 || string(woken.got[0].Body) != bodies[1] {
		t.Fatalf("the woken receive got %d events, %v; want the other released event", len(woken.got), woken.err)
	}
	if i != 0 {
		t.Errorf("the second waiter was woken before the first")
	}
	if c := f.counts(sub); c != (queue.Counts{Locked: 2, Waiting: 1}) {
		t.Fatalf("counts %+v; want both events locked and the other receive still waiting", c)
	}
	f.clock.Advance(time.Minute) // the other receive's wait ends, empty
	if last, _ := next(t, a, b); last.err != nil || len(last.got) != 0 {
		t.Fatalf("the other receive got %d events, %v; want none", len(last.got), last.err)
	}
}

// TestWake_OnePerEvent: three receives wait; each published event wakes
// one of them, the one that has waited longest, and the others keep
// waiting.
func TestWake_OnePerEvent(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	var chs []<-chan answer
	for range 3 {
		chs = append(chs, f.waitingReceive(sub, 10, time.Minute))
	}
	for round := range 3 {
		f.mustPublish(1, sub)
		a, i := next(t, chs...)
		if a.err != nil || len(a.got) != 1 || i != round {
			t.Fatalf("publish %d answered receive %d with %d events, %v; want receive %d with the event", round, i, len(a.got), a.err, round)
		}
		chs[i] = nil // a nil channel never answers again
		f.waitFor(sub, 2-round)
	}
}

// TestWake_LockExpiry: a lock that expires wakes a waiting receive.
func TestWake_LockExpiry(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(1, sub)
	first := f.receive(sub, 1)
	w := f.waitingReceive(sub, 1, 2*time.Minute)
	f.clock.Advance(60 * time.Second)
	a, _ := next(t, w)
	if a.err != nil || len(a.got) != 1 || a.got[0].DeliveryCount != 2 || a.got[0].LockToken == first[0].LockToken {
		t.Fatalf("after the lock expired the waiting receive got %+v, %v", a.got, a.err)
	}
}

// TestWaitingLimit: beyond Options.MaxWaiting a receive that would wait is
// refused at once, naming the limit; one that finds events is not, and
// room comes back when a waiting receive answers.
func TestWaitingLimit(t *testing.T) {
	sub := queueSub(1, "app", 300, 10, time.Hour)
	other := queueSub(2, "other", 300, 10, time.Hour)
	f := newFixture(t, queue.Options{MaxWaiting: 1}, sub, other)
	w := f.waitingReceive(sub, 1, time.Minute)

	_, err := f.store.Receive(t.Context(), other, 1, time.Minute)
	var e *eventgrid.Error
	if !errors.As(err, &e) || e.Code != eventgrid.EUnavailable || !strings.Contains(e.Message, "broker__maxWaitingReceives") {
		t.Fatalf("a second waiting receive: %v; want EUnavailable naming broker__maxWaitingReceives", err)
	}
	f.mustPublish(1, other)
	if got, err := f.store.Receive(t.Context(), other, 1, time.Minute); err != nil || len(got) != 1 {
		t.Fatalf("a receive that finds an event: %d events, %v", len(got), err)
	}

	f.mustPublish(1, sub)
	if a, _ := next(t, w); len(a.got) != 1 {
		t.Fatalf("the waiting receive got %d events", len(a.got))
	}
	w2 := f.waitingReceive(other, 1, time.Minute) // room again
	f.clock.Advance(time.Minute)
	if a, _ := next(t, w2); a.err != nil || len(a.got) != 0 {
		t.Fatalf("the receive waiting after the first answered: %d events, %v", len(a.got), a.err)
	}
}
