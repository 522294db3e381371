package queue_test

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/clock"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/queue"
)

// BenchmarkStoreRound measures the store's work for 100 events of a queue
// with 50,000 waiting: enqueueing them, one receive of 100 and the
// acknowledgement of their tokens.
func BenchmarkStoreRound(b *testing.B) {
	const batch, backlog = 100, 50000
	sub := queueSub(1, "app", 300, 10, 24*time.Hour)
	store := queue.New(queue.Options{Clock: clock.System{}}, zerolog.Nop())
	defer func() { _ = store.Close(context.Background()) }()
	d := dispatch.New(dispatch.Options{Budget: budget.New(budget.Limits{Events: 2 * backlog, EventsPerSubscription: 2 * backlog}), Queues: store})
	d.SubscriptionPut(sub)
	body := []byte(`{"specversion":"1.0","id":"1","source":"s","type":"t"}`)
	ds := make([]eventgrid.Delivery, batch)
	for i := range ds {
		ds[i] = eventgrid.Delivery{Event: &eventgrid.Event{Body: body}, Subscriptions: []*eventgrid.EventSubscription{sub}}
	}
	publish := func() {
		now := time.Now()
		for i := range ds {
			ds[i].Event.Accepted = now
		}
		if err := d.Publish(context.Background(), eventgrid.Publication{Topic: topic, Deliveries: ds}); err != nil {
			b.Fatal(err)
		}
	}
	for range backlog / batch {
		publish()
	}
	toks := make([]string, 0, batch)
	b.ResetTimer()
	for range b.N {
		publish()
		got, err := store.Receive(context.Background(), sub, batch, 0)
		if err != nil || len(got) != batch {
			b.Fatalf("received %d events: %v", len(got), err)
		}
		toks = toks[:0]
		for _, r := range got {
			toks = append(toks, r.LockToken)
		}
		if res, err := store.Acknowledge(sub, toks); err != nil || len(res.Succeeded) != batch {
			b.Fatalf("acknowledged %d: %v", len(res.Succeeded), err)
		}
	}
}
