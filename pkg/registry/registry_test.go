package registry_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// MustNew returns a registry with the default options (webhooks may use
// http) changed by f, recording observer calls.
func MustNew(tb testing.TB, f func(*registry.Options)) (*registry.Registry, *mock.SubscriptionObserver) {
	tb.Helper()
	opts := registry.DefaultOptions()
	opts.WebhookHTTPSOnly = false
	if f != nil {
		f(&opts)
	}
	obs := &mock.SubscriptionObserver{}
	return registry.New(opts, obs), obs
}

// MustPutTopic creates or updates a topic or fails tb.
func MustPutTopic(tb testing.TB, r *registry.Registry, name string, schema eventgrid.InputSchema) eventgrid.Topic {
	tb.Helper()
	t, _, err := r.PutTopic(tb.Context(), eventgrid.Topic{Name: name, InputSchema: schema})
	if err != nil {
		tb.Fatalf("PutTopic(%s): %v", name, err)
	}
	return t
}

// MustPutSubscription creates or updates a webhook subscription or fails tb.
func MustPutSubscription(tb testing.TB, r *registry.Registry, topic, name string) *eventgrid.EventSubscription {
	tb.Helper()
	s, _, err := r.PutSubscription(tb.Context(), hook(topic, name))
	if err != nil {
		tb.Fatalf("PutSubscription(%s/%s): %v", topic, name, err)
	}
	return s
}

// hook is a valid webhook subscription.
func hook(topic, name string) eventgrid.EventSubscription {
	return eventgrid.EventSubscription{
		Topic: topic, Name: name,
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://h/x"},
	}
}

// mustCode fails tb unless err carries code.
func mustCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := eventgrid.ErrorCode(err); got != code {
		tb.Fatalf("error = %v (code %s), want code %s", err, got, code)
	}
}

// changes formats recorded observer calls.
func changes(o *mock.SubscriptionObserver) []string {
	var out []string
	for _, c := range o.Changes() {
		out = append(out, c.String())
	}
	return out
}

func TestRegistry_Topics(t *testing.T) {
	r, _ := MustNew(t, nil)
	ctx := t.Context()

	got, created, err := r.PutTopic(ctx, eventgrid.Topic{Name: "Orders"})
	if err != nil || !created || got.Name != "Orders" || got.InputSchema != eventgrid.EventGridSchema {
		t.Fatalf("PutTopic = %+v, %v, %v; want created Orders with EventGridSchema", got, created, err)
	}
	got, created, err = r.PutTopic(ctx, eventgrid.Topic{Name: "ORDERS", InputSchema: eventgrid.CustomEventSchema})
	if err != nil || created || got.Name != "Orders" || got.InputSchema != eventgrid.CustomEventSchema {
		t.Fatalf("update = %+v, %v, %v; want Orders updated to CustomEventSchema", got, created, err)
	}
	MustPutTopic(t, r, "b", "")
	MustPutTopic(t, r, "A", "")

	t.Run("Lookup", func(t *testing.T) {
		for _, n := range []string{"orders", "ORDERS", "Orders"} {
			if tp, err := r.Topic(ctx, n); err != nil || tp.Name != "Orders" {
				t.Errorf("Topic(%s) = %+v, %v", n, tp, err)
			}
		}
	})
	t.Run("SortedCaseInsensitively", func(t *testing.T) {
		ts, err := r.Topics(ctx)
		var names []string
		for _, tp := range ts {
			names = append(names, tp.Name)
		}
		if err != nil || !slices.Equal(names, []string{"A", "b", "Orders"}) {
			t.Errorf("Topics = %v, %v", names, err)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		_, err := r.Topic(ctx, "nope")
		mustCode(t, err, eventgrid.ETopicNotFound)
		mustCode(t, r.DeleteTopic(ctx, "nope"), eventgrid.ETopicNotFound)
		_, _, err = r.Routes("nope")
		mustCode(t, err, eventgrid.ETopicNotFound)
	})
	t.Run("Delete", func(t *testing.T) {
		if err := r.DeleteTopic(ctx, "oRdErS"); err != nil {
			t.Fatal(err)
		}
		_, err := r.Topic(ctx, "Orders")
		mustCode(t, err, eventgrid.ETopicNotFound)
	})
}

func TestRegistry_InvalidNames(t *testing.T) {
	r, _ := MustNew(t, nil)
	MustPutTopic(t, r, "t", "")
	for _, name := range []string{"", "a.b", "a/b", "café", "a b", string(make([]byte, 129))} {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			_, _, err := r.PutTopic(t.Context(), eventgrid.Topic{Name: name})
			mustCode(t, err, eventgrid.EInvalidName)
			_, _, err = r.PutSubscription(t.Context(), hook("t", name))
			mustCode(t, err, eventgrid.EInvalidName)
		})
	}
}

func TestRegistry_MaxTopics(t *testing.T) {
	r, _ := MustNew(t, func(o *registry.Options) { o.MaxTopics = 2 })
	MustPutTopic(t, r, "a", "")
	MustPutTopic(t, r, "b", "")
	_, _, err := r.PutTopic(t.Context(), eventgrid.Topic{Name: "c"})
	mustCode(t, err, eventgrid.ELimitExceeded)
	MustPutTopic(t, r, "B", eventgrid.CustomEventSchema) // updating at the limit is fine
	if err := r.DeleteTopic(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	MustPutTopic(t, r, "c", "")
}

func TestRegistry_MaxSubscriptionsPerTopic(t *testing.T) {
	r, _ := MustNew(t, func(o *registry.Options) { o.MaxSubscriptionsPerTopic = 2 })
	MustPutTopic(t, r, "t", "")
	MustPutTopic(t, r, "u", "")
	MustPutSubscription(t, r, "t", "a")
	MustPutSubscription(t, r, "t", "b")
	_, _, err := r.PutSubscription(t.Context(), hook("t", "c"))
	mustCode(t, err, eventgrid.ELimitExceeded)
	MustPutSubscription(t, r, "t", "A") // an update
	MustPutSubscription(t, r, "u", "c") // another topic
	if err := r.DeleteSubscription(t.Context(), "t", "a"); err != nil {
		t.Fatal(err)
	}
	MustPutSubscription(t, r, "t", "c")
}

func TestRegistry_ObserverOrder(t *testing.T) {
	r, obs := MustNew(t, nil)
	ctx := t.Context()
	MustPutTopic(t, r, "T", "")
	MustPutTopic(t, r, "other", "")

	s1 := MustPutSubscription(t, r, "t", "Sub")
	up, created, err := r.PutSubscription(ctx, hook("T", "SUB"))
	if err != nil || created {
		t.Fatalf("update: created=%v err=%v", created, err)
	}
	if up.UID != s1.UID || up.Name != "Sub" || up.Topic != "T" {
		t.Errorf("update = %+v; want UID %d, name Sub, topic T", up, s1.UID)
	}
	if up == s1 {
		t.Error("update modified the stored subscription in place; it must be replaced")
	}
	z := MustPutSubscription(t, r, "T", "z")
	a := MustPutSubscription(t, r, "T", "a")
	o := MustPutSubscription(t, r, "other", "o")
	if uids := []uint64{s1.UID, z.UID, a.UID, o.UID}; len(slices.Compact(slices.Sorted(slices.Values(uids)))) != 4 {
		t.Errorf("UIDs %v are not distinct", uids)
	}
	if err := r.DeleteSubscription(ctx, "t", "sub"); err != nil {
		t.Fatal(err)
	}
	recreated := MustPutSubscription(t, r, "T", "sub")
	if recreated.UID == s1.UID {
		t.Errorf("re-created subscription kept UID %d", s1.UID)
	}
	if err := r.DeleteTopic(ctx, "T"); err != nil {
		t.Fatal(err)
	}
	c := func(op string, s *eventgrid.EventSubscription) string {
		return fmt.Sprintf("%s %s/%s#%d", op, s.Topic, s.Name, s.UID)
	}
	want := []string{
		c("put", s1), c("put", s1), c("put", z), c("put", a), c("put", o),
		c("delete", s1), c("put", recreated),
		// Deleting the topic deletes each of its subscriptions, in name order.
		c("delete", a), c("delete", recreated), c("delete", z),
	}
	if got := changes(obs); !slices.Equal(got, want) {
		t.Errorf("observer calls\n got %v\nwant %v", got, want)
	}
	if _, err := r.Subscriptions(ctx, "other"); err != nil {
		t.Errorf("other topic affected: %v", err)
	}
}

func TestRegistry_Subscriptions(t *testing.T) {
	r, _ := MustNew(t, nil)
	ctx := t.Context()
	MustPutTopic(t, r, "t", "")
	for _, n := range []string{"c", "B", "a"} {
		MustPutSubscription(t, r, "t", n)
	}
	t.Run("ListSorted", func(t *testing.T) {
		subs, err := r.Subscriptions(ctx, "T")
		var names []string
		for _, s := range subs {
			names = append(names, s.Name)
		}
		if err != nil || !slices.Equal(names, []string{"a", "B", "c"}) {
			t.Errorf("Subscriptions = %v, %v", names, err)
		}
	})
	t.Run("RoutesMatchList", func(t *testing.T) {
		tp, routes, err := r.Routes("T")
		if err != nil || tp.Name != "t" || len(routes) != 3 {
			t.Fatalf("Routes = %+v, %d routes, %v", tp, len(routes), err)
		}
		for i, want := range []string{"a", "B", "c"} {
			if routes[i].Subscription.Name != want || routes[i].Matcher == nil {
				t.Errorf("route %d = %+v, want %s with a matcher", i, routes[i], want)
			}
		}
	})
	t.Run("Get", func(t *testing.T) {
		s, err := r.Subscription(ctx, "T", "b")
		if err != nil || s.Name != "B" || s.Topic != "t" || s.EventDeliverySchema != eventgrid.EventGridSchema {
			t.Errorf("Subscription = %+v, %v", s, err)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		_, err := r.Subscription(ctx, "t", "nope")
		mustCode(t, err, eventgrid.ESubscriptionMissing)
		_, err = r.Subscription(ctx, "nope", "a")
		mustCode(t, err, eventgrid.ETopicNotFound)
		_, err = r.Subscriptions(ctx, "nope")
		mustCode(t, err, eventgrid.ETopicNotFound)
		mustCode(t, r.DeleteSubscription(ctx, "t", "nope"), eventgrid.ESubscriptionMissing)
		mustCode(t, r.DeleteSubscription(ctx, "nope", "a"), eventgrid.ETopicNotFound)
		_, _, err = r.PutSubscription(ctx, hook("nope", "a"))
		mustCode(t, err, eventgrid.ETopicNotFound)
	})
	t.Run("SnapshotsAreStable", func(t *testing.T) {
		_, before, _ := r.Routes("t")
		if err := r.DeleteSubscription(ctx, "t", "a"); err != nil {
			t.Fatal(err)
		}
		_, after, _ := r.Routes("t")
		if len(before) != 3 || len(after) != 2 {
			t.Errorf("routes before/after delete = %d/%d, want 3/2", len(before), len(after))
		}
	})
}

func TestRegistry_SchemaChange(t *testing.T) {
	r, _ := MustNew(t, nil)
	ctx := t.Context()
	MustPutTopic(t, r, "t", eventgrid.CustomEventSchema)
	s := MustPutSubscription(t, r, "t", "s")
	if s.EventDeliverySchema != eventgrid.CustomEventSchema {
		t.Errorf("delivery schema = %s, want the topic's", s.EventDeliverySchema)
	}
	_, _, err := r.PutTopic(ctx, eventgrid.Topic{Name: "t", InputSchema: eventgrid.CloudEventSchemaV1_0})
	mustCode(t, err, eventgrid.EInvalidSchema)
	_, _, err = r.PutTopic(ctx, eventgrid.Topic{Name: "t"}) // empty means EventGridSchema
	mustCode(t, err, eventgrid.EInvalidSchema)
	MustPutTopic(t, r, "T", eventgrid.CustomEventSchema)
	if err := r.DeleteSubscription(ctx, "t", "s"); err != nil {
		t.Fatal(err)
	}
	if tp := MustPutTopic(t, r, "t", eventgrid.CloudEventSchemaV1_0); tp.InputSchema != eventgrid.CloudEventSchemaV1_0 {
		t.Errorf("topic = %+v", tp)
	}
}

func TestRegistry_NilObserver(t *testing.T) {
	r := registry.New(registry.DefaultOptions(), nil)
	MustPutTopic(t, r, "t", "")
	sub := hook("t", "s")
	sub.Destination.EndpointURL = "https://h/x"
	if _, _, err := r.PutSubscription(t.Context(), sub); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteTopic(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
}
