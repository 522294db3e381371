package budget_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// roomFixture is a budget on a fake clock whose subscription a holds a
// full share (5 deliveries of 10 bytes) under one request.
type roomFixture struct {
	b     *budget.Budget
	clock *fakeclock.Clock
	wait  budget.Wait
	a     budget.Claim // a's share, with a's claim of one more delivery
	held  *budget.Hold // the request that fills a's share
}

func newRoomFixture(t *testing.T, hold time.Duration) *roomFixture {
	t.Helper()
	f := &roomFixture{b: budget.New(limits), clock: fakeclock.New()}
	f.wait = budget.Wait{Hold: hold, Clock: f.clock}
	f.a = budget.Claim{Sub: sub("a"), Share: new(budget.Share), Events: 1, Bytes: 10}
	var err error
	f.held, err = f.b.Reserve(5, 50, time.Time{}, []budget.Claim{{Sub: f.a.Sub, Share: f.a.Share, Events: 5, Bytes: 50}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// drain has a take a delivery, then fills its share again.
func (f *roomFixture) drain(t *testing.T) {
	t.Helper()
	f.held.Delivered(f.a.Share, 10, f.clock.Now())
	if _, err := f.b.Reserve(1, 10, time.Time{}, []budget.Claim{f.a}); err != nil {
		t.Fatal(err)
	}
}

// reserve asks, in the background, for the deliveries of claims.
func (f *roomFixture) reserve(ctx context.Context, claims ...budget.Claim) <-chan error {
	done := make(chan error, 1)
	var events, bytes int64
	for _, c := range claims {
		events, bytes = events+c.Events, bytes+c.Bytes
	}
	go func() {
		_, err := f.b.ReserveWithin(ctx, f.wait, events, bytes, time.Time{}, claims)
		done <- err
	}()
	return done
}

// result returns what a reserve answered; it fails the test if the
// reserve is still held after a while, which only a broken hold does.
func result(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the request is still held for room")
		return nil
	}
}

// heldFor waits until n requests are held for room and each has armed
// its recheck timer: a request counts as held before it reads the clock,
// so a test that advanced the clock on the count alone could do it before
// the timer was armed, which then waits on the advanced clock and never
// fires.
func (f *roomFixture) heldFor(t *testing.T, n int) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if w := f.b.Waiting(); w != n {
			return fmt.Errorf("%d requests held for room; want %d", w, n)
		}
		if a := len(f.clock.Armed()); a != n {
			return fmt.Errorf("%d recheck timers armed; want %d", a, n)
		}
		return nil
	})
}

// resultAfterHold returns what a reserve answered once the test moved the
// clock past its hold. A recheck falling due on the way wakes the request,
// which may read the clock before the move has ended and arm its next
// recheck after it, from the time it read: past the moved clock, where it
// never fires. So until the request answers, the clock is moved on to
// each recheck it arms.
func (f *roomFixture) resultAfterHold(t *testing.T, done <-chan error) error {
	t.Helper()
	var err error
	brokertest.Eventually(t, 10*time.Second, func() error {
		select {
		case err = <-done:
			return nil
		default:
			f.clock.AdvanceToNext()
			return errors.New("the request is still held for room")
		}
	})
	return err
}

// TestReserveWithin_HeldUntilDelivered: a request that does not fit the
// share of a subscription taking deliveries waits, and is accepted once a
// delivery makes room.
func TestReserveWithin_HeldUntilDelivered(t *testing.T) {
	f := newRoomFixture(t, time.Hour)
	f.drain(t)
	done := f.reserve(context.Background(), f.a)
	f.heldFor(t, 1)
	f.held.Delivered(f.a.Share, 10, f.clock.Now())
	if err := result(t, done); err != nil {
		t.Fatalf("held request: %v; want it accepted once a delivery made room", err)
	}
	if f.b.Waiting() != 0 {
		t.Fatalf("%d requests still counted as held", f.b.Waiting())
	}
}

// TestReserveWithin_WokenOnceAMarginIsFree: with bounds of 128 and more,
// a delivery wakes the held requests only once 1/64 of the bounds is free,
// so that a hundred deliveries given back in a row do not wake them a
// hundred times; the request is accepted then, with no recheck (the clock
// does not move).
func TestReserveWithin_WokenOnceAMarginIsFree(t *testing.T) {
	l := budget.Limits{Events: 1280, Bytes: 1 << 20, EventsPerSubscription: 640, BytesPerSubscription: 1 << 19}
	b, clock := budget.New(l), fakeclock.New()
	share := new(budget.Share)
	full, err := b.Reserve(640, 6400, time.Time{}, []budget.Claim{{Sub: sub("a"), Share: share, Events: 640, Bytes: 6400}})
	if err != nil {
		t.Fatal(err)
	}
	full.Delivered(share, 10, clock.Now()) // the share is draining
	if _, err := b.Reserve(1, 10, time.Time{}, []budget.Claim{{Sub: sub("a"), Share: share, Events: 1, Bytes: 10}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.ReserveWithin(context.Background(), budget.Wait{Hold: time.Hour, Clock: clock}, 2, 20, time.Time{},
			[]budget.Claim{{Sub: sub("a"), Share: share, Events: 2, Bytes: 20}})
		done <- err
	}()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if b.Waiting() != 1 || len(clock.Armed()) != 1 {
			return fmt.Errorf("%d held, %d rechecks armed; want 1 and 1", b.Waiting(), len(clock.Armed()))
		}
		return nil
	})
	for range 9 { // 9 of the 10 events of the margin free: room for the request, but not woken for it
		full.Delivered(share, 10, clock.Now())
	}
	select {
	case err := <-done:
		t.Fatalf("held request answered (%v) before a margin was free", err)
	default:
	}
	full.Delivered(share, 10, clock.Now())
	if err := result(t, done); err != nil {
		t.Fatalf("held request: %v; want it accepted once a margin was free", err)
	}
}

// TestReserveWithin_RefusedAtOnce: a request waits only for what may make
// room within the hold: behind a subscriber that never took a delivery, or
// not for as long as the hold, behind one subscriber of two that takes
// none, with no hold, or when it can never fit, it is refused at once.
func TestReserveWithin_RefusedAtOnce(t *testing.T) {
	t.Run("NeverDelivered", func(t *testing.T) {
		f := newRoomFixture(t, time.Hour)
		if err := result(t, f.reserve(context.Background(), f.a)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
			t.Fatalf("behind a subscriber that never took a delivery: %v; want EQueueFull", err)
		}
	})
	t.Run("DeliveredLongAgo", func(t *testing.T) {
		f := newRoomFixture(t, time.Second)
		f.drain(t)
		f.clock.Advance(time.Second)
		if err := result(t, f.reserve(context.Background(), f.a)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
			t.Fatalf("behind a subscriber whose last delivery is a hold ago: %v; want EQueueFull", err)
		}
	})
	t.Run("OneOfTwoDead", func(t *testing.T) {
		f := newRoomFixture(t, time.Hour)
		f.drain(t)
		dead := budget.Claim{Sub: sub("dead"), Share: new(budget.Share), Events: 4, Bytes: 40}
		if _, err := f.b.Reserve(4, 40, time.Time{}, []budget.Claim{dead}); err != nil {
			t.Fatal(err)
		}
		dead.Events, dead.Bytes = 2, 20
		if err := result(t, f.reserve(context.Background(), f.a, dead)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
			t.Fatalf("behind a draining share and a dead one: %v; want EQueueFull", err)
		}
	})
	t.Run("NoHold", func(t *testing.T) {
		f := newRoomFixture(t, 0)
		f.drain(t)
		if err := result(t, f.reserve(context.Background(), f.a)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
			t.Fatalf("with a hold of 0: %v; want EQueueFull", err)
		}
	})
	t.Run("NeverFits", func(t *testing.T) {
		f := newRoomFixture(t, time.Hour)
		f.held.Delivered(f.a.Share, 10, f.clock.Now())
		big := f.a
		big.Events = 6
		if err := result(t, f.reserve(context.Background(), big)); eventgrid.ErrorCode(err) != eventgrid.EPayloadTooLarge {
			t.Fatalf("a request larger than a share: %v; want EPayloadTooLarge", err)
		}
	})
}

// TestReserveWithin_HoldEnds: a held request is refused once the hold has
// passed without room, or at once when its context ends.
func TestReserveWithin_HoldEnds(t *testing.T) {
	for _, end := range []string{"Hold", "Context"} {
		t.Run(end, func(t *testing.T) {
			f := newRoomFixture(t, time.Second)
			f.drain(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := f.reserve(ctx, f.a)
			f.heldFor(t, 1)
			var err error
			if end == "Hold" {
				f.clock.Advance(time.Second)
				err = f.resultAfterHold(t, done)
			} else {
				cancel()
				err = result(t, done)
			}
			if eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
				t.Fatalf("after the %s ended: %v; want EQueueFull", end, err)
			}
			if used, _ := f.a.Share.Used(); used != 5 {
				t.Fatalf("a's share holds %d after the refusal; want 5", used)
			}
		})
	}
}

// TestReserveWithin_BrokerFull: when the broker's own bounds are what is
// full, a request waits while any subscriber takes deliveries.
func TestReserveWithin_BrokerFull(t *testing.T) {
	f := newRoomFixture(t, time.Hour)
	other := budget.Claim{Sub: sub("b"), Share: new(budget.Share), Events: 5, Bytes: 50}
	h, err := f.b.Reserve(5, 50, time.Time{}, []budget.Claim{other}) // the broker's 10
	if err != nil {
		t.Fatal(err)
	}
	c := budget.Claim{Sub: sub("c"), Share: new(budget.Share), Events: 1, Bytes: 10}
	if err := result(t, f.reserve(context.Background(), c)); eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		t.Fatalf("a full broker that never delivered: %v; want EQueueFull at once", err)
	}
	h.Delivered(other.Share, 10, f.clock.Now())
	if _, err := f.b.Reserve(1, 10, time.Time{}, []budget.Claim{c}); err != nil {
		t.Fatal(err) // full again
	}
	done := f.reserve(context.Background(), c)
	f.heldFor(t, 1)
	h.Delivered(other.Share, 10, f.clock.Now())
	if err := result(t, done); err != nil {
		t.Fatalf("held for the broker's room: %v; want it accepted", err)
	}
}

// TestAdmitWithin: before a body is read, a full broker that takes
// deliveries holds the request for room; one that takes none refuses it.
func TestAdmitWithin(t *testing.T) {
	f := newRoomFixture(t, time.Hour)
	other := budget.Claim{Sub: sub("b"), Share: new(budget.Share), Events: 5, Bytes: 50}
	h, err := f.b.Reserve(5, 50, time.Time{}, []budget.Claim{other})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.b.AdmitWithin(context.Background(), f.wait, 10); eventgrid.ErrorCode(err) != eventgrid.EQueueFull || eventgrid.RefusalReason(err) != eventgrid.RefusedBrokerFull {
		t.Fatalf("a full broker that never delivered: %v; want EQueueFull, broker_full", err)
	}
	h.Delivered(other.Share, 10, f.clock.Now())
	if err := f.b.AdmitWithin(context.Background(), f.wait, 10); err != nil {
		t.Fatalf("a broker with room refused a request: %v", err)
	}
	if _, err := f.b.Reserve(1, 10, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.b.AdmitWithin(context.Background(), f.wait, 10) }()
	f.heldFor(t, 1)
	h.Delivered(other.Share, 10, f.clock.Now())
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the held request was refused after a delivery made room: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request is still held after a delivery made room")
	}
}

// TestAdmitWithin_NeverFits: a body larger than the broker's bytes bound
// gets EPayloadTooLarge at once, naming the bound, however empty the
// broker and whatever the hold: 503 would have its publisher retry it for
// ever. One of the bound's size is admitted.
func TestAdmitWithin_NeverFits(t *testing.T) {
	for _, hold := range []time.Duration{0, time.Hour} {
		b := budget.New(budget.Limits{Bytes: 1000})
		w := budget.Wait{Hold: hold}
		err := b.AdmitWithin(context.Background(), w, 1001)
		if eventgrid.ErrorCode(err) != eventgrid.EPayloadTooLarge || eventgrid.RefusalReason(err) != eventgrid.RefusedTooLarge ||
			!strings.Contains(err.Error(), "broker__maxQueuedBytes 1000") {
			t.Errorf("hold %v: 1001 bytes of 1000: %v; want EPayloadTooLarge naming broker__maxQueuedBytes", hold, err)
		}
		if err := b.AdmitWithin(context.Background(), w, 1000); err != nil {
			t.Errorf("hold %v: 1000 bytes of 1000: %v", hold, err)
		}
	}
}

// stillHeld fails the test if a request has been answered.
func stillHeld(t *testing.T, name string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s answered (%v) while requests held before it waited for the room", name, err)
	default:
	}
}

// TestReserveWithin_OldestFirst: room goes to the held requests in the
// order they came. Woken together, two requests raced for it, and the
// loser of every race was refused after its hold while the other was
// accepted; so each round here starts the requests again.
func TestReserveWithin_OldestFirst(t *testing.T) {
	for range 10 {
		f := newRoomFixture(t, time.Hour)
		f.drain(t)
		two := budget.Claim{Sub: f.a.Sub, Share: f.a.Share, Events: 2, Bytes: 20}
		first := f.reserve(context.Background(), two)
		f.heldFor(t, 1)
		second := f.reserve(context.Background(), two)
		f.heldFor(t, 2)
		f.held.Delivered(f.a.Share, 10, f.clock.Now())
		f.held.Delivered(f.a.Share, 10, f.clock.Now()) // room for one of them
		if err := result(t, first); err != nil {
			t.Fatalf("the request held first: %v; want it accepted with the first room", err)
		}
		stillHeld(t, "the request held second", second)
		f.held.Delivered(f.a.Share, 10, f.clock.Now())
		f.held.Delivered(f.a.Share, 10, f.clock.Now())
		if err := result(t, second); err != nil {
			t.Fatalf("the request held second: %v; want it accepted with the next room", err)
		}
	}
}

// TestReserveWithin_ArrivalQueuesBehind: a request that arrives while
// another is held for a share it claims waits its turn, even if it would
// fit now.
func TestReserveWithin_ArrivalQueuesBehind(t *testing.T) {
	f := newRoomFixture(t, time.Hour)
	f.drain(t)
	two := budget.Claim{Sub: f.a.Sub, Share: f.a.Share, Events: 2, Bytes: 20}
	first := f.reserve(context.Background(), two)
	f.heldFor(t, 1)
	f.held.Delivered(f.a.Share, 10, f.clock.Now()) // room for one delivery: not for the held request
	later := f.reserve(context.Background(), f.a)
	f.heldFor(t, 2)
	f.held.Delivered(f.a.Share, 10, f.clock.Now())
	if err := result(t, first); err != nil {
		t.Fatalf("the request held first: %v; want it accepted", err)
	}
	stillHeld(t, "the request that arrived later", later)
	f.held.Delivered(f.a.Share, 10, f.clock.Now())
	if err := result(t, later); err != nil {
		t.Fatalf("the request that arrived later: %v; want it accepted in its turn", err)
	}
}

// twoShares is a budget on a fake clock whose subscriptions a and b
// each hold a full share, have each had a delivery taken (they are
// draining), and have a request held for them: onA, of 2 deliveries, held
// first, and onB, of 1. h holds the shares' first n-1 deliveries.
type twoShares struct {
	b        *budget.Budget
	clock    *fakeclock.Clock
	wait     budget.Wait
	c        []budget.Claim
	h        []*budget.Hold
	onA, onB <-chan error
}

// heldOnEach returns twoShares with shares of l each holding n deliveries
// of 10 bytes.
func heldOnEach(t *testing.T, l budget.Limits, n int64) *twoShares {
	t.Helper()
	f := &twoShares{b: budget.New(l), clock: fakeclock.New()}
	f.wait = budget.Wait{Hold: time.Hour, Clock: f.clock}
	for _, name := range []string{"a", "b"} {
		c := budget.Claim{Sub: sub(name), Share: new(budget.Share), Events: n, Bytes: 10 * n}
		h, err := f.b.Reserve(c.Events, c.Bytes, time.Time{}, []budget.Claim{c})
		if err != nil {
			t.Fatal(err)
		}
		h.Delivered(c.Share, 10, f.clock.Now())
		if _, err := f.b.Reserve(1, 10, time.Time{}, []budget.Claim{{Sub: c.Sub, Share: c.Share, Events: 1, Bytes: 10}}); err != nil {
			t.Fatal(err)
		}
		f.c, f.h = append(f.c, c), append(f.h, h)
	}
	f.onA = reserveIn(f.b, f.wait, budget.Claim{Sub: f.c[0].Sub, Share: f.c[0].Share, Events: 2, Bytes: 20})
	heldIn(t, f.b, 1)
	f.onB = reserveIn(f.b, f.wait, budget.Claim{Sub: f.c[1].Sub, Share: f.c[1].Share, Events: 1, Bytes: 10})
	heldIn(t, f.b, 2)
	return f
}

// deliver has subscription i (0: a, 1: b) take a delivery.
func (f *twoShares) deliver(i int) { f.h[i].Delivered(f.c[i].Share, 10, f.clock.Now()) }

// reserveIn asks b, in the background, for the deliveries of c.
func reserveIn(b *budget.Budget, wait budget.Wait, c budget.Claim) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := b.ReserveWithin(context.Background(), wait, c.Events, c.Bytes, time.Time{}, []budget.Claim{c})
		done <- err
	}()
	return done
}

// heldIn waits until n requests are held for room in b.
func heldIn(t *testing.T, b *budget.Budget, n int) {
	t.Helper()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if w := b.Waiting(); w != n {
			return fmt.Errorf("%d requests held for room; want %d", w, n)
		}
		return nil
	})
}

// TestReserveWithin_OtherSharesGoOn: a request held for one share does
// not hold up those for another, held or arriving.
func TestReserveWithin_OtherSharesGoOn(t *testing.T) {
	f := heldOnEach(t, budget.Limits{Events: 100, Bytes: 10000, EventsPerSubscription: 5, BytesPerSubscription: 400}, 5)
	f.deliver(1)
	if err := result(t, f.onB); err != nil {
		t.Fatalf("held for b after a request held for a: %v; want it accepted with b's room", err)
	}
	stillHeld(t, "the request held for a", f.onA)
	f.deliver(1)
	if err := result(t, reserveIn(f.b, f.wait, budget.Claim{Sub: f.c[1].Sub, Share: f.c[1].Share, Events: 1, Bytes: 10})); err != nil {
		t.Fatalf("arriving for b while a request is held for a: %v; want it accepted at once", err)
	}
	f.deliver(0)
	f.deliver(0)
	if err := result(t, f.onA); err != nil {
		t.Fatalf("held for a: %v; want it accepted with a's room", err)
	}
}

// TestReserveWithin_BrokerRoomOldestFirst: when the broker's own bounds
// are what is full, their room too goes to the held requests in the order
// they came, whichever shares they claim.
func TestReserveWithin_BrokerRoomOldestFirst(t *testing.T) {
	// Shares of 5 holding 3 each, and a broker of 6: full.
	f := heldOnEach(t, budget.Limits{Events: 6, Bytes: 10000, EventsPerSubscription: 5, BytesPerSubscription: 400}, 3)
	first, second := f.onA, f.onB
	f.deliver(0) // room in the broker for the second request, not the first
	stillHeld(t, "the request held second", second)
	f.deliver(1)
	if err := result(t, first); err != nil {
		t.Fatalf("the request held first: %v; want it accepted with the broker's room", err)
	}
	stillHeld(t, "the request held second", second)
	f.deliver(1)
	if err := result(t, second); err != nil {
		t.Fatalf("the request held second: %v; want it accepted in its turn", err)
	}
}

// TestReserveWithin_ManyHeld: many requests held at once for two shares,
// some giving up while deliveries make room: each one that waits is
// accepted in its turn, and nothing is left behind: every room taken is
// given back, and no request stays counted as held.
func TestReserveWithin_ManyHeld(t *testing.T) {
	b := budget.New(budget.Limits{Events: 40, Bytes: 1 << 20, EventsPerSubscription: 25, BytesPerSubscription: 1 << 19})
	wait := budget.Wait{Hold: time.Minute}
	shares := []*budget.Share{new(budget.Share), new(budget.Share)}
	type taken struct {
		h     *budget.Hold
		share *budget.Share
		n     int
	}
	holds := make(chan taken, 1000)
	// The subscribers: each takes the deliveries of the requests accepted,
	// one at a time.
	var subscribers sync.WaitGroup
	for range 4 {
		subscribers.Add(1)
		go func() {
			defer subscribers.Done()
			for tk := range holds {
				for range tk.n {
					tk.h.Delivered(tk.share, 10, time.Now())
				}
			}
		}()
	}
	// Both shares, and the broker, are draining: they have had a delivery
	// taken.
	for _, s := range shares {
		h, err := b.Reserve(1, 10, time.Time{}, []budget.Claim{{Sub: sub("p"), Share: s, Events: 1, Bytes: 10}})
		if err != nil {
			t.Fatal(err)
		}
		h.Delivered(s, 10, time.Now())
	}
	var publishers sync.WaitGroup
	var accepted, refused atomic.Int64
	for p := range 16 {
		publishers.Add(1)
		go func() {
			defer publishers.Done()
			for i := range 50 {
				s := shares[(p+i)%2]
				n := int64(1 + (p+i)%5)
				ctx, cancel := context.WithCancel(context.Background())
				if i%7 == 3 {
					cancel() // gives up at once, while others are held
				}
				h, err := b.ReserveWithin(ctx, wait, n, 10*n, time.Time{}, []budget.Claim{{Sub: sub("s"), Share: s, Events: n, Bytes: 10 * n}})
				cancel()
				switch {
				case err == nil:
					accepted.Add(1)
					holds <- taken{h, s, int(n)}
				case eventgrid.ErrorCode(err) == eventgrid.EQueueFull && i%7 == 3:
					refused.Add(1)
				default:
					t.Errorf("reserve of a request that waited: %v; want it accepted in its turn", err)
				}
			}
		}()
	}
	publishers.Wait()
	close(holds)
	subscribers.Wait()
	t.Logf("%d accepted, %d refused", accepted.Load(), refused.Load())
	if events, bytes := b.Used(); events != 0 || bytes != 0 {
		t.Errorf("the budget holds %d events, %d bytes after every delivery; want none", events, bytes)
	}
	for i, s := range shares {
		if events, bytes := s.Used(); events != 0 || bytes != 0 {
			t.Errorf("share %d holds %d events, %d bytes after every delivery; want none", i, events, bytes)
		}
	}
	if w := b.Waiting(); w != 0 {
		t.Errorf("%d requests counted as held after all were answered", w)
	}
	if accepted.Load() == 0 {
		t.Error("no request accepted")
	}
}
