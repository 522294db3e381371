package desired_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// lateObserver forwards the registry's changes to a reconciler made after
// it, as the broker wires them.
type lateObserver struct {
	atomic.Pointer[desired.Reconciler]
}

func (l *lateObserver) SubscriptionPut(*eventgrid.EventSubscription) {}
func (l *lateObserver) SubscriptionDeleted(s *eventgrid.EventSubscription) {
	l.Load().SubscriptionDeleted(s)
}
func (l *lateObserver) TopicCreated(eventgrid.Topic)   {}
func (l *lateObserver) TopicDeleted(t eventgrid.Topic) { l.Load().TopicDeleted(t) }

// TestReconciler_HeldByAPI: an entry naming what the REST API manages is
// refused with a reason that says how the API came to manage it (created
// over it, or left to it when a declaration stopped naming it), and it is
// not retried on a timer; the deletion over the REST API applies the
// declaration again at once, and then it applies.
func TestReconciler_HeldByAPI(t *testing.T) {
	ctx := context.Background()
	var late lateObserver
	reg := registry.New(registry.DefaultOptions(), &late)
	clk := fakeclock.New()
	r := desired.NewReconciler(reg, zerolog.Nop(), desired.Options{Clock: clk})
	timers := func() int { return len(clk.Armed()) }
	late.Store(r)
	due := r.Retries(fileSource)
	pending := func() bool {
		select {
		case <-due:
			return true
		default:
			return false
		}
	}
	apply := func(d string) desired.Result {
		t.Helper()
		res, err := r.Apply(ctx, fileSource, []byte(d))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// Created over the API first.
	if _, _, err := reg.PutTopic(ctx, eventgrid.Topic{Name: "orders"}); err != nil {
		t.Fatal(err)
	}
	res := apply(`{"topics": {"Orders": {}}}`)
	msg := res.Errors.Topics["Orders"]
	for _, want := range []string{"HttpStatusCode='Conflict' ErrorCode='Conflict'",
		`Topic "orders" was created over the REST API before this declaration named it`,
		"Delete it over the REST API and the declaration applies it at once, or declare another name."} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q, want it to hold %q", msg, want)
		}
	}
	if res.Retrying() || timers() != 0 || pending() {
		t.Fatalf("retrying %v, %d timers, pending %v: want no retry until the API deletes the topic", res.Retrying(), timers(), pending())
	}
	if st := r.Status(); len(st) != 1 || st[0].NextRetry != "" {
		t.Errorf("status %+v, want no next retry", st)
	}
	// Another topic's deletion over the API is no reason to apply again.
	if _, _, err := reg.PutTopic(ctx, eventgrid.Topic{Name: "other"}); err != nil {
		t.Fatal(err)
	}
	if err := reg.DeleteTopic(ctx, "other"); err != nil || pending() {
		t.Fatalf("delete other: %v, pending %v", err, pending())
	}
	if err := reg.DeleteTopic(ctx, "ORDERS"); err != nil {
		t.Fatal(err)
	}
	if !pending() {
		t.Fatal("the API's deletion of orders did not apply the declaration again")
	}
	if res := apply(`{"topics": {"Orders": {}}}`); res.Errors.Len() != 0 || len(res.Topics) != 1 {
		t.Fatalf("after the deletion: %+v", res)
	}

	// Left to the API: the source stops declaring a topic that holds a
	// subscription of the API's, and then declares it again.
	sub := eventgrid.EventSubscription{Topic: "Orders", Name: "api-sub", Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://sink.example/x"}}
	if _, _, err := reg.PutSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	apply(`{}`)
	res = apply(`{"topics": {"Orders": {}}}`)
	msg = res.Errors.Topics["Orders"]
	if want := `Topic "Orders" passed to the REST API when desired_config_file /etc/edgegrid/desired.json stopped declaring it while it held event subscriptions of others`; !strings.Contains(msg, want) {
		t.Errorf("error %q, want it to hold %q", msg, want)
	}
	if res.Retrying() || timers() != 0 || pending() {
		t.Fatalf("retrying %v, %d timers, pending %v", res.Retrying(), timers(), pending())
	}
	if err := reg.DeleteTopic(ctx, "Orders"); err != nil || !pending() {
		t.Fatalf("delete Orders: %v, pending %v; want the declaration applied again", err, pending())
	}

	// A name another source holds is still retried on a timer: that source
	// may let it go without anyone deleting anything.
	if _, err := r.Apply(ctx, desired.Twin, []byte(`{"topics": {"shared": {}}}`)); err != nil {
		t.Fatal(err)
	}
	if res := apply(`{"topics": {"shared": {}}}`); !res.Retrying() || timers() != 1 {
		t.Errorf("retrying %v, %d timers; want a retry on a timer", res.Retrying(), timers())
	}
}

// deletingStore is the registry with a REST API deletion of topic name
// landing as soon as an apply has been refused it: after the apply saw it
// held, before the apply ended.
type deletingStore struct {
	*registry.Registry
	name string
}

func (s deletingStore) PutTopic(ctx context.Context, t eventgrid.Topic) (eventgrid.Topic, bool, error) {
	got, created, err := s.Registry.PutTopic(ctx, t)
	if err != nil && strings.EqualFold(t.Name, s.name) {
		if derr := s.Registry.DeleteTopic(ctx, s.name); derr != nil {
			panic(derr)
		}
	}
	return got, created, err
}

// TestReconciler_HeldByAPIDeletedDuringApply: a deletion over the REST API
// that lands while the apply that found the name held still runs applies
// the declaration again, as one after it does.
func TestReconciler_HeldByAPIDeletedDuringApply(t *testing.T) {
	ctx := context.Background()
	var late lateObserver
	reg := registry.New(registry.DefaultOptions(), &late)
	r := desired.NewReconciler(deletingStore{reg, "orders"}, zerolog.Nop(), desired.Options{Clock: fakeclock.New()})
	late.Store(r)
	if _, _, err := reg.PutTopic(ctx, eventgrid.Topic{Name: "orders"}); err != nil {
		t.Fatal(err)
	}
	res, err := r.Apply(ctx, fileSource, []byte(`{"topics": {"orders": {}}}`))
	if err != nil || res.Errors.Topics["orders"] == "" {
		t.Fatalf("apply: %v, %+v; want orders refused as the API's", err, res)
	}
	select {
	case <-r.Retries(fileSource):
	default:
		t.Fatal("the deletion during the apply did not apply the declaration again")
	}
	if res, err := r.Apply(ctx, fileSource, []byte(`{"topics": {"orders": {}}}`)); err != nil || res.Errors.Len() != 0 {
		t.Fatalf("applied again: %v, %+v", err, res)
	}
}
