package push_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
)

// benchmarkEngine publishes b.N events in requests of perRequest events to
// subs subscriptions and waits until every delivery is made. It measures the
// engine alone: fan-out, queueing, batch assembly and the workers, with a
// sender that costs nothing.
func benchmarkEngine(b *testing.B, subs, perRequest int, batch int) {
	s := &sender{Discard: true}
	o := push.DefaultOptions()
	limits(&o, budget.Limits{Events: 1 << 30, Bytes: 1 << 40, EventsPerSubscription: 1 << 30, BytesPerSubscription: 1 << 40})
	e := push.New(o, s, nil, zerolog.Nop())
	d := dispatch.New(dispatch.Options{Push: e, Budget: push.BudgetOf(e)})
	defer func() { _ = closeWithin(e, time.Second) }()
	var list []*eventgrid.EventSubscription
	for i := range subs {
		list = append(list, newSub(e, fmt.Sprint("s", i), func(s *eventgrid.EventSubscription) {
			s.Destination.MaxEventsPerBatch = batch
		}))
	}
	events := make([]*eventgrid.Event, perRequest)
	for i := range events {
		events[i] = newEvent(fmt.Sprint(i), 1024)
	}
	ds := make([]eventgrid.Delivery, perRequest)
	for i, ev := range events {
		ds[i] = eventgrid.Delivery{Event: ev, Subscriptions: list}
	}
	b.ReportAllocs()
	b.ResetTimer()
	published := 0
	for published < b.N {
		n := min(perRequest, b.N-published)
		if err := d.Publish(context.Background(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "t"}, Deliveries: ds[:n]}); err != nil {
			b.Fatal(err)
		}
		published += n
	}
	want := int64(b.N * subs)
	for int64(s.Accepted()) < want {
		time.Sleep(50 * time.Microsecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(want), "ns/delivery")
}

func BenchmarkEngine(b *testing.B) {
	b.Run("Unbatched/1sub", func(b *testing.B) { benchmarkEngine(b, 1, 1, 0) })
	b.Run("Batch50/1sub/publish100", func(b *testing.B) { benchmarkEngine(b, 1, 100, 50) })
	b.Run("FanOut/10subs/publish100", func(b *testing.B) { benchmarkEngine(b, 10, 100, 0) })
	b.Run("FanOut/10subs/publish100/batch50", func(b *testing.B) { benchmarkEngine(b, 10, 100, 50) })
}

// failOnce fails every event's first attempt and accepts the second.
func failOnce(_ context.Context, b *push.Batch) error {
	if b.DeliveryCount == 0 {
		return errFail
	}
	return nil
}

// BenchmarkEngineRetries measures a delivery that fails once and is retried,
// through the EdgeQueues back-off lists or the CloudExponential heap, with
// delays shortened to a microsecond.
func BenchmarkEngineRetries(b *testing.B) {
	for _, schedule := range []eventgrid.RetrySchedule{eventgrid.EdgeQueues, eventgrid.CloudExponential} {
		b.Run(string(schedule), func(b *testing.B) {
			s := &sender{Discard: true, SendFn: failOnce}
			o := push.DefaultOptions()
			limits(&o, budget.Limits{Events: 1 << 30, Bytes: 1 << 40, EventsPerSubscription: 1 << 30, BytesPerSubscription: 1 << 40})
			o.Backoff = [2]time.Duration{time.Microsecond, time.Microsecond}
			o.ExponentialScale = 1e-7
			o.LogDeliveryFailure = false
			o.DefaultSchedule = schedule
			e := push.New(o, s, nil, zerolog.Nop())
			defer func() { _ = closeWithin(e, time.Second) }()
			d := dispatch.New(dispatch.Options{Push: e, Budget: push.BudgetOf(e)})
			sub := newSub(e, "s", func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 50 })
			events := make([]eventgrid.Delivery, 100)
			for i := range events {
				events[i] = eventgrid.Delivery{Event: newEvent(fmt.Sprint(i), 1024), Subscriptions: []*eventgrid.EventSubscription{sub}}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for published := 0; published < b.N; published += 100 {
				n := min(100, b.N-published)
				if err := d.Publish(context.Background(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "t"}, Deliveries: events[:n]}); err != nil {
					b.Fatal(err)
				}
			}
			for s.Accepted() < b.N {
				time.Sleep(50 * time.Microsecond)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/delivery")
		})
	}
}
