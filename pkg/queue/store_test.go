package queue_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

func TestReceiveAcknowledge(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	bodies := f.mustPublish(3, sub)

	got := f.receive(sub, 2)
	if len(got) != 2 || string(got[0].Body) != bodies[0] || string(got[1].Body) != bodies[1] {
		t.Fatalf("received %v; want the two oldest events", got)
	}
	for _, r := range got {
		if r.DeliveryCount != 1 || len(r.LockToken) < 22 {
			t.Fatalf("received %+v; want deliveryCount 1 and a 128-bit token", r)
		}
	}
	if got[0].LockToken == got[1].LockToken {
		t.Fatal("two receives share a lock token")
	}
	if c := f.counts(sub); c != (queue.Counts{Available: 1, Locked: 2}) {
		t.Fatalf("counts %+v", c)
	}

	res, err := f.store.Acknowledge(sub, []string{got[0].LockToken, "bogus", got[0].LockToken})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Succeeded) != 1 || res.Succeeded[0] != got[0].LockToken {
		t.Fatalf("succeeded %v", res.Succeeded)
	}
	if len(res.Failed) != 2 || res.Failed[0].Code != queue.CodeBadRequest || res.Failed[1].Code != queue.CodeTokenLost {
		t.Fatalf("failed %+v; want BadRequest for the bogus token, TokenLost for the second acknowledge", res.Failed)
	}
	if c := f.counts(sub); c != (queue.Counts{Available: 1, Locked: 1}) {
		t.Fatalf("counts %+v", c)
	}
}

func TestLockExpiryRedelivers(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(1, sub)
	first := f.receive(sub, 1)

	f.clock.Advance(59 * time.Second)
	if c := f.counts(sub); c.Locked != 1 {
		t.Fatalf("counts %+v before the lock ends", c)
	}
	f.clock.Advance(time.Second)
	if c := f.counts(sub); c != (queue.Counts{Available: 1}) {
		t.Fatalf("counts %+v after the lock ends; want the event available again", c)
	}
	again := f.receive(sub, 1)
	if len(again) != 1 || again[0].DeliveryCount != 2 || again[0].LockToken == first[0].LockToken {
		t.Fatalf("redelivered %+v; want deliveryCount 2 under a new token", again)
	}
	res, _ := f.store.Acknowledge(sub, tokens(first))
	if len(res.Failed) != 1 || res.Failed[0].Code != queue.CodeTokenLost {
		t.Fatalf("acknowledging the expired lock: %+v; want TokenLost", res)
	}
	if f.rec.expired != 1 {
		t.Fatalf("lock expiries counted %d; want 1", f.rec.expired)
	}
}

func TestMaxDeliveryCount(t *testing.T) {
	for _, withDeadLetter := range []bool{true, false} {
		sub := queueSub(1, "app", 60, 2, time.Hour)
		if withDeadLetter {
			sub.DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob, ContainerName: "dl"}
		}
		f := newFixture(t, queue.Options{}, sub)
		f.mustPublish(1, sub)
		f.receive(sub, 1)
		f.clock.Advance(time.Minute) // expires: delivered once
		got := f.receive(sub, 1)
		if _, err := f.store.Release(sub, tokens(got), 0); err != nil { // delivered twice, released once more
			t.Fatal(err)
		}
		if c := f.counts(sub); c != (queue.Counts{}) {
			t.Fatalf("counts %+v; want the event gone", c)
		}
		dead, dropped := f.rec.snapshot()
		want := map[outcome.Reason]int{outcome.MaxDeliveryCountExceeded: 1}
		if withDeadLetter && (!maps.Equal(dead, want) || len(dropped) != 0 || f.rec.letters[0].Attempts != 2) {
			t.Fatalf("dead %v dropped %v; want one dead letter after 2 deliveries", dead, dropped)
		}
		if !withDeadLetter && (!maps.Equal(dropped, want) || len(dead) != 0) {
			t.Fatalf("dead %v dropped %v; want one counted drop", dead, dropped)
		}
	}
}

func TestReleaseDelay(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(2, sub)
	got := f.receive(sub, 1)
	if _, err := f.store.Release(sub, tokens(got), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if c := f.counts(sub); c != (queue.Counts{Available: 1, Delayed: 1}) {
		t.Fatalf("counts %+v", c)
	}
	second := f.receive(sub, 10)
	if len(second) != 1 || second[0].DeliveryCount != 1 {
		t.Fatalf("received %+v; want only the other event", second)
	}
	f.clock.Advance(9 * time.Second)
	if got := f.receive(sub, 10); len(got) != 0 {
		t.Fatalf("received %d events before the delay passed", len(got))
	}
	f.clock.Advance(time.Second)
	again := f.receive(sub, 10)
	if len(again) != 1 || again[0].DeliveryCount != 2 {
		t.Fatalf("received %+v after the delay; want the released event", again)
	}
}

func TestReleasedGoesToTheBack(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	bodies := f.mustPublish(1, sub)
	first := f.receive(sub, 1)
	later := f.mustPublish(1, sub)
	f.store.Release(sub, tokens(first), 0)
	got := f.receive(sub, 2)
	if len(got) != 2 || string(got[0].Body) != later[0] || string(got[1].Body) != bodies[0] {
		t.Fatalf("order after release: %q, %q", got[0].Body, got[1].Body)
	}
}

func TestRenewLock(t *testing.T) {
	sub := queueSub(1, "app", 300, 10, 24*time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(1, sub)
	got := f.receive(sub, 1)
	// Renewing every 4 minutes keeps the lock until one hour after the
	// receive, and no longer.
	for range 14 {
		f.clock.Advance(4 * time.Minute)
		res, _ := f.store.RenewLocks(sub, tokens(got))
		if len(res.Succeeded) != 1 {
			t.Fatalf("renew at %v failed: %+v", f.clock.Now(), res.Failed)
		}
	}
	f.clock.Advance(4 * time.Minute) // 60 minutes after the receive
	if c := f.counts(sub); c.Locked != 0 {
		t.Fatalf("counts %+v an hour after the receive; want the lock ended", c)
	}
	res, _ := f.store.RenewLocks(sub, tokens(got))
	if len(res.Failed) != 1 || res.Failed[0].Code != queue.CodeTokenLost {
		t.Fatalf("renew after an hour: %+v; want TokenLost", res)
	}
}

func TestTimeToLive(t *testing.T) {
	sub := queueSub(1, "app", 300, 10, 4*time.Minute)
	sub.DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob, ContainerName: "dl"}
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(2, sub)
	got := f.receive(sub, 1)
	f.clock.Advance(4 * time.Minute)
	// The waiting event expired; the locked one is settled as usual.
	dead, _ := f.rec.snapshot()
	if dead[outcome.TimeToLiveExceeded] != 1 {
		t.Fatalf("dead letters %v; want the unreceived event, past its time to live", dead)
	}
	if res, _ := f.store.Release(sub, tokens(got), 0); len(res.Succeeded) != 1 {
		t.Fatalf("release: %+v", res)
	}
	dead, _ = f.rec.snapshot()
	if dead[outcome.TimeToLiveExceeded] != 2 || f.counts(sub) != (queue.Counts{}) {
		t.Fatalf("dead letters %v; want the released event, past its time to live, too", dead)
	}
}

// Events expire in the order of their time to live, whatever order they
// wait in: one released behind a later one expires first, and one released
// with a delay expires while delayed.
func TestTimeToLive_OutOfQueueOrder(t *testing.T) {
	sub := queueSub(1, "app", 300, 10, 100*time.Second)
	f := newFixture(t, queue.Options{}, sub)
	start := f.clock.Now()
	f.mustPublish(1, sub) // a: expires at 100 s
	a := f.receive(sub, 1)
	f.clock.Advance(20 * time.Second)
	f.mustPublish(1, sub) // b: expires at 120 s
	if res, _ := f.store.Release(sub, tokens(a), 0); len(res.Succeeded) != 1 {
		t.Fatalf("release: %+v", res)
	}
	f.clock.Advance(10 * time.Second)
	f.mustPublish(1, sub) // c: expires at 130 s
	c := f.receive(sub, 1)
	if len(c) != 1 || c[0].DeliveryCount != 1 {
		t.Fatalf("received %+v; want b first", c)
	}
	f.mustPublish(1, sub) // d: expires at 130 s
	c = f.receive(sub, 3)
	if len(c) != 3 {
		t.Fatalf("received %d events; want a, c and d", len(c))
	}
	// a and d wait again, d delayed past its time to live; c stays locked.
	if res, _ := f.store.Release(sub, []string{c[0].LockToken}, 0); len(res.Succeeded) != 1 {
		t.Fatalf("release: %+v", res)
	}
	if res, _ := f.store.Release(sub, []string{c[2].LockToken}, 600*time.Second); len(res.Succeeded) != 1 {
		t.Fatalf("release: %+v", res)
	}
	for _, step := range []struct {
		at   time.Duration
		gone int
	}{{99 * time.Second, 0}, {100 * time.Second, 1}, {129 * time.Second, 1}, {130 * time.Second, 2}} {
		f.clock.AdvanceTo(start.Add(step.at))
		if _, dropped := f.rec.snapshot(); dropped[outcome.TimeToLiveExceeded] != step.gone {
			t.Fatalf("at %v: %d expired, want %d", step.at, dropped[outcome.TimeToLiveExceeded], step.gone)
		}
	}
	if got := f.counts(sub); got != (queue.Counts{Locked: 2}) {
		t.Fatalf("counts %+v; want b and c locked, nothing else", got)
	}
}

func TestReject(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	f.mustPublish(1, sub)
	got := f.receive(sub, 1)
	res, _ := f.store.Reject(sub, tokens(got))
	if len(res.Succeeded) != 1 {
		t.Fatalf("reject: %+v", res)
	}
	if _, dropped := f.rec.snapshot(); dropped[outcome.Rejected] != 1 {
		t.Fatalf("dropped %v; want the rejected event counted", dropped)
	}
}

func TestShareOfTheBudget(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	other := queueSub(2, "other", 60, 10, time.Hour)
	f := newLimitedFixture(t, queue.Options{}, budget.Limits{Events: 5, EventsPerSubscription: 3}, sub, other)
	f.mustPublish(3, sub)
	_, err := f.publish(1, sub, other)
	if eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		t.Fatalf("publish past the share: %v; want QueueFull", err)
	}
	if c := f.counts(other); c.Available != 0 {
		t.Fatalf("the refused publish queued %+v for the other subscription; want all or nothing", c)
	}
	got := f.receive(sub, 1)
	f.store.Acknowledge(sub, tokens(got))
	f.mustPublish(1, sub, other)
	if n, _ := f.budget.Used(); n != 4 {
		t.Fatalf("global budget holds %d events; want 4", n)
	}
	f.store.SubscriptionDeleted(sub)
	if n, _ := f.budget.Used(); n != 1 {
		t.Fatalf("global budget holds %d events after the delete; want 1", n)
	}
	if _, dropped := f.rec.snapshot(); dropped[outcome.SubscriptionDeleted] != 3 {
		t.Fatalf("dropped %v; want the deleted subscription's 3 events counted", dropped)
	}
}

func TestLongPoll(t *testing.T) {
	sub := queueSub(1, "app", 60, 10, time.Hour)
	f := newFixture(t, queue.Options{}, sub)
	type answer struct {
		got []queue.Received
		err error
	}
	wait := func() chan answer {
		ch := make(chan answer, 1)
		go func() {
			got, err := f.store.Receive(context.Background(), sub, 10, 30*time.Second)
			ch <- answer{got, err}
		}()
		return ch
	}

	// Woken by a publish.
	ch := wait()
	waitForWaiter(t, f)
	f.mustPublish(1, sub)
	if a := <-ch; a.err != nil || len(a.got) != 1 {
		t.Fatalf("woken receive: %+v", a)
	}

	// Empty when the wait ends.
	ch = wait()
	waitForWaiter(t, f)
	f.clock.Advance(30 * time.Second)
	if a := <-ch; a.err != nil || len(a.got) != 0 {
		t.Fatalf("receive after the wait: %+v; want none", a)
	}

	// Ended by a delete.
	ch = wait()
	waitForWaiter(t, f)
	f.store.SubscriptionDeleted(sub)
	if a := <-ch; eventgrid.ErrorCode(a.err) != eventgrid.ESubscriptionMissing {
		t.Fatalf("receive on a deleted subscription: %+v", a)
	}
}

// waitForWaiter waits until a receive has started waiting: its wait timer,
// due 30 s from now, is set.
func waitForWaiter(t *testing.T, f *fixture) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if !slices.Contains(f.clock.Armed(), f.clock.Now().Add(30*time.Second)) {
			return errors.New("no receive started waiting")
		}
		return nil
	})
}
