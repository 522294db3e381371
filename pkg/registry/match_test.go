package registry_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// matchRoutes is a topic with an unfiltered subscription and one that takes
// only events of type "A".
func matchRoutes(tb testing.TB) []registry.Route {
	r, _ := MustNew(tb, nil)
	MustPutTopic(tb, r, "t", eventgrid.EventGridSchema)
	MustPutSubscription(tb, r, "t", "all")
	onlyA := hook("t", "onlyA")
	onlyA.Filter = &eventgrid.Filter{IncludedEventTypes: []string{"A"}}
	if _, _, err := r.PutSubscription(context.Background(), onlyA); err != nil {
		tb.Fatal(err)
	}
	_, routes, err := r.Routes("t")
	if err != nil {
		tb.Fatal(err)
	}
	return routes
}

func names(subs []*eventgrid.EventSubscription) string {
	s := ""
	for _, sub := range subs {
		s += sub.Name + " "
	}
	return s
}

func TestMatch(t *testing.T) {
	routes := matchRoutes(t)
	a1 := &eventgrid.Event{ID: "a1", Type: "A"}
	a2 := &eventgrid.Event{ID: "a2", Type: "A"}
	b := &eventgrid.Event{ID: "b", Type: "B"}
	got := registry.Match(nil, []*eventgrid.Event{a1, b, a2}, routes)
	want := []string{"a1: all onlyA ", "b: all ", "a2: all onlyA "}
	if len(got) != len(want) {
		t.Fatalf("%d deliveries, want %d", len(got), len(want))
	}
	for i, d := range got {
		if s := d.Event.ID + ": " + names(d.Subscriptions); s != want[i] {
			t.Errorf("delivery %d = %q, want %q", i, s, want[i])
		}
	}
	if &got[0].Subscriptions[0] != &got[2].Subscriptions[0] {
		t.Error("events that match every route do not share one slice")
	}
	if n := len(registry.Match(nil, []*eventgrid.Event{b}, routes[1:])); n != 0 {
		t.Errorf("an event matching nothing made %d deliveries", n)
	}
	if n := len(registry.Match(nil, []*eventgrid.Event{a1}, nil)); n != 0 {
		t.Errorf("no routes made %d deliveries", n)
	}
}

func BenchmarkMatch(b *testing.B) {
	routes := matchRoutes(b)
	events := make([]*eventgrid.Event, 100)
	for i := range events {
		events[i] = &eventgrid.Event{ID: fmt.Sprint(i), Type: "A"}
	}
	var ds []eventgrid.Delivery
	b.ReportAllocs()
	for b.Loop() {
		ds = registry.Match(ds[:0], events, routes)
	}
}
