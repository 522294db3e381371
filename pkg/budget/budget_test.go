package budget_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

var limits = budget.Limits{Events: 10, Bytes: 1000, EventsPerSubscription: 5, BytesPerSubscription: 400}

func sub(name string) *eventgrid.EventSubscription {
	return &eventgrid.EventSubscription{Topic: "t", Name: name}
}

// TestReserve is the broker's one never-fits / full decision: 413 for a
// request that can never fit, naming the bound; 503 for one that does not
// fit now, naming the subscription whose share is full; and nothing held
// after either.
func TestReserve(t *testing.T) {
	a, b := sub("a"), sub("b")
	tests := []struct {
		name string
		// held beforehand: deliveries of 10 bytes in a's share, and
		// broker-wide deliveries and bytes outside any share.
		heldA, heldEvents, heldBytes int64
		events, bytes                int64
		claims                       []budget.Claim // Share filled in: a's, b's
		code                         string
		says                         []string
	}{
		{name: "Fits", events: 4, bytes: 300, claims: []budget.Claim{{Sub: a, Events: 2, Bytes: 200}, {Sub: b, Events: 2, Bytes: 100}}},
		{name: "FitsExactly", events: 10, bytes: 1000, claims: []budget.Claim{{Sub: a, Events: 5, Bytes: 400}, {Sub: b, Events: 5, Bytes: 400}}},
		{name: "NeverBrokerEvents", events: 11, bytes: 11, claims: []budget.Claim{{Sub: a, Events: 5}, {Sub: b, Events: 5}, {Sub: sub("c"), Events: 1}},
			code: eventgrid.EPayloadTooLarge, says: []string{"11 deliveries", "broker__maxQueuedEvents 10"}},
		{name: "NeverBrokerBytes", events: 1, bytes: 1001, claims: []budget.Claim{{Sub: a, Events: 1, Bytes: 100}},
			code: eventgrid.EPayloadTooLarge, says: []string{"1001 bytes", "broker__maxQueuedBytes 1000"}},
		{name: "NeverShareEvents", events: 6, bytes: 60, claims: []budget.Claim{{Sub: a, Events: 6, Bytes: 60}},
			code: eventgrid.EPayloadTooLarge, says: []string{"6 deliveries to event subscription a", "broker__maxQueuedEventsPerSubscription 5"}},
		{name: "NeverShareBytes", events: 1, bytes: 401, claims: []budget.Claim{{Sub: b, Events: 1, Bytes: 401}},
			code: eventgrid.EPayloadTooLarge, says: []string{"401 bytes for event subscription b", "broker__maxQueuedBytesPerSubscription 400"}},
		// Whether a request can ever fit does not depend on what is held:
		// a full broker still answers 413 to one that never could.
		{name: "NeverWhileFull", heldA: 5, heldEvents: 5, events: 6, bytes: 60, claims: []budget.Claim{{Sub: a, Events: 6, Bytes: 60}},
			code: eventgrid.EPayloadTooLarge, says: []string{"broker__maxQueuedEventsPerSubscription"}},
		{name: "ShareFull", heldA: 3, events: 5, bytes: 50, claims: []budget.Claim{{Sub: b, Events: 1, Bytes: 10}, {Sub: a, Events: 3, Bytes: 30}, {Sub: sub("c"), Events: 1, Bytes: 10}},
			code: eventgrid.EQueueFull, says: []string{"Event subscription a holds its share", "retry later"}},
		{name: "BrokerEventsFull", heldEvents: 8, events: 3, bytes: 30, claims: []budget.Claim{{Sub: a, Events: 2, Bytes: 20}, {Sub: b, Events: 1, Bytes: 10}},
			code: eventgrid.EQueueFull, says: []string{"The broker holds its limit", "broker__maxQueuedEvents 10"}},
		{name: "BrokerBytesFull", heldEvents: 1, heldBytes: 900, events: 1, bytes: 101, claims: []budget.Claim{{Sub: a, Events: 1, Bytes: 101}},
			code: eventgrid.EQueueFull, says: []string{"The broker holds its limit", "broker__maxQueuedBytes 1000"}},
		// A subscription deleted since matching has no share: its
		// deliveries count broker-wide only.
		{name: "DeletedSubscription", heldA: 5, events: 2, bytes: 20, claims: []budget.Claim{{Sub: a, Events: 2, Bytes: 20}},
			code: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bud := budget.New(limits)
			var shareA, shareB budget.Share
			hold(t, bud, tt.heldA+tt.heldEvents, tt.heldA*10+tt.heldBytes, []budget.Claim{{Sub: a, Share: &shareA, Events: tt.heldA, Bytes: tt.heldA * 10}})
			claims := append([]budget.Claim(nil), tt.claims...)
			for i := range claims {
				switch {
				case tt.name == "DeletedSubscription":
				case claims[i].Sub == a:
					claims[i].Share = &shareA
				case claims[i].Sub == b:
					claims[i].Share = &shareB
				}
			}
			beforeEvents, beforeBytes := bud.Used()
			h, err := bud.Reserve(tt.events, tt.bytes, time.Time{}, claims)
			if (err == nil) != (tt.code == "") || err != nil && eventgrid.ErrorCode(err) != tt.code {
				t.Fatalf("Reserve = %v; want code %q", err, tt.code)
			}
			for _, s := range tt.says {
				if !strings.Contains(eventgrid.ErrorMessage(err), s) {
					t.Errorf("%q does not say %q", eventgrid.ErrorMessage(err), s)
				}
			}
			events, bytes := bud.Used()
			ae, ab := shareA.Used()
			be, bb := shareB.Used()
			if err != nil {
				if events != beforeEvents || bytes != beforeBytes || ae != tt.heldA || ab != tt.heldA*10 || be != 0 || bb != 0 {
					t.Fatalf("a refusal left %d/%d held, a %d/%d, b %d/%d; want nothing taken", events, bytes, ae, ab, be, bb)
				}
				return
			}
			if events != beforeEvents+tt.events || bytes != beforeBytes+tt.bytes {
				t.Fatalf("held %d/%d; want %d/%d more", events, bytes, tt.events, tt.bytes)
			}
			releaseAll(h, claims)
			if events, bytes := bud.Used(); events != beforeEvents || bytes != beforeBytes {
				t.Fatalf("after release: %d/%d held; want %d/%d", events, bytes, beforeEvents, beforeBytes)
			}
		})
	}
}

// hold takes events and bytes as one request, failing the test if they do
// not fit.
func hold(t *testing.T, b *budget.Budget, events, bytes int64, claims []budget.Claim) {
	t.Helper()
	if events == 0 {
		return
	}
	if _, err := b.Reserve(events, bytes, time.Time{}, claims); err != nil {
		t.Fatalf("holding %d/%d beforehand: %v", events, bytes, err)
	}
}

func releaseAll(h *budget.Hold, claims []budget.Claim) {
	for _, c := range claims {
		for i := range c.Events {
			n := c.Bytes / c.Events
			if i == 0 {
				n += c.Bytes % c.Events
			}
			h.Release(c.Share, n)
		}
	}
}

// TestHold: a request's bytes stay held until its last delivery is done;
// each delivery's event and share bytes leave at once.
func TestHold(t *testing.T) {
	b := budget.New(limits)
	var s1, s2 budget.Share
	h, err := b.Reserve(3, 500, time.Unix(7, 0), []budget.Claim{{Sub: sub("a"), Share: &s1, Events: 2, Bytes: 200}, {Sub: sub("b"), Share: &s2, Events: 1, Bytes: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Accepted.Equal(time.Unix(7, 0)) {
		t.Fatalf("Accepted = %v", h.Accepted)
	}
	h.Release(&s1, 100)
	h.Release(&s2, 100)
	if e, by := b.Used(); e != 1 || by != 500 {
		t.Fatalf("with one delivery left: %d events, %d bytes; want 1, 500", e, by)
	}
	if e, by := s1.Used(); e != 1 || by != 100 {
		t.Fatalf("share a: %d/%d; want 1/100", e, by)
	}
	h.Release(&s1, 100)
	if e, by := b.Used(); e != 0 || by != 0 {
		t.Fatalf("after the last delivery: %d/%d held", e, by)
	}
}

func TestAdmit(t *testing.T) {
	b := budget.New(limits)
	if !b.Admit(1000) || b.Admit(1001) {
		t.Fatal("Admit on an empty budget: want up to broker__maxQueuedBytes")
	}
	if _, err := b.Reserve(10, 1, time.Time{}, nil); err != nil {
		t.Fatal(err)
	}
	if b.Admit(1) {
		t.Fatal("Admit with every delivery taken")
	}
}

func TestDefaults(t *testing.T) {
	got := budget.New(budget.Limits{Events: 100, Bytes: 1 << 20}).Limits()
	if got.EventsPerSubscription != 100 || got.BytesPerSubscription != 1<<20 {
		t.Fatalf("per-subscription bounds %+v; want at most the broker-wide ones", got)
	}
	if d := budget.New(budget.Limits{}).Limits(); d != budget.DefaultLimits() {
		t.Fatalf("zero limits = %+v; want the defaults", d)
	}
}
