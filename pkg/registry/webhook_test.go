package registry_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

func TestRegistry_Handshake(t *testing.T) {
	type call struct{ old, sub *eventgrid.EventSubscription }
	var calls []call
	var fail atomic.Bool
	var r *registry.Registry
	r, obs := MustNew(t, func(o *registry.Options) {
		o.Handshake = func(ctx context.Context, old, sub *eventgrid.EventSubscription) (func(*eventgrid.EventSubscription), error) {
			// The registry's lock is not held: writing works.
			if _, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: "other"}); err != nil {
				return nil, err
			}
			calls = append(calls, call{old, sub})
			if fail.Load() {
				return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, "endpoint said no")
			}
			return nil, nil
		}
	})
	MustPutTopic(t, r, "T", "")

	t.Run("New", func(t *testing.T) {
		first := MustPutSubscription(t, r, "t", "s")
		if len(calls) != 1 || calls[0].old != nil || calls[0].sub.Topic != "T" || calls[0].sub.EventDeliverySchema != eventgrid.EventGridSchema {
			t.Fatalf("calls = %+v, want one with no old subscription and the validated new one", calls)
		}
		second := MustPutSubscription(t, r, "t", "S")
		if len(calls) != 2 || calls[1].old != first || calls[1].sub.UID != first.UID || second.UID != first.UID {
			t.Fatalf("update: calls[1] = %+v, want the stored subscription as old", calls[1])
		}
	})
	t.Run("RefusedLeavesTheOldOne", func(t *testing.T) {
		before, _ := r.Subscription(t.Context(), "t", "s")
		n := len(changes(obs))
		fail.Store(true)
		defer fail.Store(false)
		sub := hook("t", "s")
		sub.Destination.EndpointURL = "http://other/x"
		_, _, err := r.PutSubscription(t.Context(), sub)
		mustCode(t, err, eventgrid.EInvalidDestination)
		after, _ := r.Subscription(t.Context(), "t", "s")
		if after != before || len(changes(obs)) != n {
			t.Fatal("a refused handshake changed the subscription")
		}
	})
	t.Run("InvalidNeverReachesTheHandshake", func(t *testing.T) {
		n := len(calls)
		sub := hook("t", "s2")
		sub.Destination.EndpointURL = "ftp://h/x"
		_, _, err := r.PutSubscription(t.Context(), sub)
		mustCode(t, err, eventgrid.EInvalidDestination)
		if len(calls) != n {
			t.Fatal("the handshake ran for an invalid subscription")
		}
	})
}

// TestRegistry_HandshakeRace deletes the subscription while the handshake
// of its update runs: the put starts over and creates it anew.
func TestRegistry_HandshakeRace(t *testing.T) {
	var r *registry.Registry
	var olds []*eventgrid.EventSubscription
	r, _ = MustNew(t, func(o *registry.Options) {
		o.Handshake = func(ctx context.Context, old, _ *eventgrid.EventSubscription) (func(*eventgrid.EventSubscription), error) {
			olds = append(olds, old)
			if len(olds) == 2 {
				return nil, r.DeleteSubscription(ctx, "t", "s")
			}
			return nil, nil
		}
	})
	MustPutTopic(t, r, "t", "")
	first := MustPutSubscription(t, r, "t", "s")
	second := MustPutSubscription(t, r, "t", "s")
	if len(olds) != 3 || olds[1] != first || olds[2] != nil {
		t.Fatalf("handshakes saw %v, want [nil, first, nil]", olds)
	}
	if second.UID == first.UID {
		t.Error("the subscription deleted during the handshake kept its UID")
	}
	if got, _ := r.Subscription(t.Context(), "t", "s"); got != second {
		t.Error("the put did not store the subscription")
	}
}

// TestRegistry_HandshakeCommit: the commit step a handshake returns runs
// once the subscription is stored, before the observer hears of it, and
// never for a put that is refused or starts over.
func TestRegistry_HandshakeCommit(t *testing.T) {
	var committed []string
	var r *registry.Registry
	var deleteDuring atomic.Bool
	var obs *mock.SubscriptionObserver
	r, obs = MustNew(t, func(o *registry.Options) {
		o.MaxSubscriptionsPerTopic = 1
		o.Handshake = func(ctx context.Context, old, sub *eventgrid.EventSubscription) (func(*eventgrid.EventSubscription), error) {
			name := sub.Name
			onStored := func(stored *eventgrid.EventSubscription) {
				committed = append(committed, fmt.Sprintf("%s:%d:%d", name, stored.UID, len(changes(obs))))
			}
			if deleteDuring.Swap(false) {
				return onStored, r.DeleteSubscription(ctx, "t", "s")
			}
			return onStored, nil
		}
	})
	MustPutTopic(t, r, "t", "")
	first := MustPutSubscription(t, r, "t", "s")
	if want := fmt.Sprintf("s:%d:0", first.UID); len(committed) != 1 || committed[0] != want {
		t.Fatalf("committed %v, want [%s] (before the observer)", committed, want)
	}
	_, _, err := r.PutSubscription(t.Context(), hook("t", "other"))
	mustCode(t, err, eventgrid.ELimitExceeded)
	if len(committed) != 1 {
		t.Fatalf("committed %v after a refused put", committed)
	}
	deleteDuring.Store(true)
	second := MustPutSubscription(t, r, "t", "s")
	if len(committed) != 2 || !strings.HasPrefix(committed[1], fmt.Sprintf("s:%d:", second.UID)) {
		t.Fatalf("committed %v, want one more, for the put that started over", committed)
	}
}
