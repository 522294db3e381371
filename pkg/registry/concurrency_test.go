package registry_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
)

// TestRegistry_Concurrent runs puts, deletes and route lookups in parallel
// (meant for -race) and then checks that the observer's history is
// consistent with the registry's final state.
func TestRegistry_Concurrent(t *testing.T) {
	r, obs := MustNew(t, nil)
	ctx := t.Context()
	const (
		workers = 8
		rounds  = 200
		topics  = 3
		subs    = 4
	)
	ev := &eventgrid.Event{ID: "1", Type: "T", Subject: "/s", HasSubject: true,
		Body: []byte(`{"id":"1","subject":"/s","eventType":"T","data":{"n":1}}`)}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				topic := fmt.Sprintf("t%d", (w+i)%topics)
				sub := fmt.Sprintf("s%d", (w*7+i)%subs)
				switch (w + i) % 6 {
				case 0, 1:
					_, _, _ = r.PutTopic(ctx, eventgrid.Topic{Name: topic})
				case 2:
					_, _, _ = r.PutSubscription(ctx, hook(topic, sub))
				case 3:
					_ = r.DeleteSubscription(ctx, topic, sub)
				case 4:
					if i%5 == 0 {
						_ = r.DeleteTopic(ctx, topic)
					} else {
						_, _, _ = r.PutSubscription(ctx, hook(topic, sub))
					}
				case 5:
					if _, routes, err := r.Routes(topic); err == nil {
						for _, rt := range routes {
							rt.Matcher.Match(ev)
							_ = rt.Subscription.Name
						}
					}
					_, _ = r.Topics(ctx)
					_, _ = r.Subscriptions(ctx, topic)
				}
			}
		})
	}
	wg.Wait()

	// Every UID is put one or more times, then deleted at most once, and
	// nothing follows its delete.
	deleted := map[uint64]bool{}
	last := map[string]mock.Change{} // by topic/name; these names are all lower case
	for _, c := range obs.Changes() {
		if deleted[c.Sub.UID] {
			t.Fatalf("change %v after the subscription was deleted", c)
		}
		if c.Op == mock.OpDelete {
			deleted[c.Sub.UID] = true
		}
		last[c.Sub.Topic+"/"+c.Sub.Name] = c
	}
	// The final state is what the history ends with.
	live := 0
	ts, _ := r.Topics(ctx)
	for _, tp := range ts {
		ss, err := r.Subscriptions(ctx, tp.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			live++
			c, ok := last[s.Topic+"/"+s.Name]
			if !ok || c.Op != mock.OpPut || c.Sub.UID != s.UID {
				t.Errorf("subscription %s/%s#%d is live but the last change was %v", s.Topic, s.Name, s.UID, c)
			}
		}
		if _, routes, _ := r.Routes(tp.Name); len(routes) != len(ss) {
			t.Errorf("topic %s has %d routes for %d subscriptions", tp.Name, len(routes), len(ss))
		}
	}
	for _, c := range last {
		if c.Op == mock.OpPut {
			live--
		}
	}
	if live != 0 {
		t.Errorf("live subscriptions and last put changes differ by %d", live)
	}
}
