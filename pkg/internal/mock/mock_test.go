package mock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
)

func delivery(id string, subs ...string) eventgrid.Delivery {
	d := eventgrid.Delivery{Event: &eventgrid.Event{ID: id}}
	for _, s := range subs {
		d.Subscriptions = append(d.Subscriptions, &eventgrid.EventSubscription{Name: s})
	}
	return d
}

func TestRecorder(t *testing.T) {
	var r mock.Recorder
	ctx := t.Context()
	topic := eventgrid.Topic{Name: "t", InputSchema: eventgrid.EventGridSchema}
	ds := []eventgrid.Delivery{delivery("1", "a"), delivery("2", "a", "b")}
	if err := r.Publish(ctx, eventgrid.Publication{Topic: topic, Deliveries: ds}); err != nil {
		t.Fatal(err)
	}
	ds[0] = delivery("changed") // the recorder keeps its own slice

	r.SetError(mock.QueueFull())
	err := r.Publish(ctx, eventgrid.Publication{Topic: topic, Deliveries: []eventgrid.Delivery{delivery("3")}})
	if eventgrid.ErrorCode(err) != eventgrid.EQueueFull {
		t.Fatalf("Publish with SetError = %v, want EQueueFull", err)
	}
	r.SetError(nil)
	if err := r.Publish(ctx, eventgrid.Publication{Topic: topic, Deliveries: []eventgrid.Delivery{delivery("4", "c")}}); err != nil {
		t.Fatal(err)
	}

	calls := r.Calls()
	if len(calls) != 2 || calls[0].Topic != topic || len(calls[0].Deliveries) != 2 {
		t.Fatalf("Calls = %+v", calls)
	}
	var ids []string
	for _, ev := range r.Events() {
		ids = append(ids, ev.ID)
	}
	if !slices.Equal(ids, []string{"1", "2", "4"}) {
		t.Errorf("Events = %v, want 1 2 4", ids)
	}
	if got := calls[1].Events(); len(got) != 1 || got[0].ID != "4" {
		t.Errorf("PublishCall.Events = %v", got)
	}
	if n := len(r.Deliveries()); n != 3 {
		t.Errorf("Deliveries = %d, want 3", n)
	}
	if r.Refused() != 1 {
		t.Errorf("Refused = %d, want 1", r.Refused())
	}
	r.Reset()
	if len(r.Calls()) != 0 || r.Refused() != 0 {
		t.Errorf("Reset left %d calls, %d refusals", len(r.Calls()), r.Refused())
	}
}

func TestRecorder_Concurrent(t *testing.T) {
	var r mock.Recorder
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				_ = r.Publish(context.Background(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "t"}, Deliveries: []eventgrid.Delivery{delivery(fmt.Sprint(i, j))}})
				_ = r.Events()
				if j == 25 {
					r.SetError(nil)
				}
			}
		})
	}
	wg.Wait()
	if n := len(r.Events()); n != 400 {
		t.Errorf("recorded %d events, want 400", n)
	}
}

func TestPublisher(t *testing.T) {
	boom := errors.New("boom")
	var got []eventgrid.Delivery
	p := &mock.Publisher{PublishFn: func(_ context.Context, pub eventgrid.Publication) error {
		got = pub.Deliveries
		if pub.Topic.Name == "fail" {
			return boom
		}
		return nil
	}}
	if err := p.Publish(t.Context(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "ok"}, Deliveries: []eventgrid.Delivery{delivery("1")}}); err != nil || len(got) != 1 {
		t.Errorf("Publish = %v, %d deliveries", err, len(got))
	}
	if err := p.Publish(t.Context(), eventgrid.Publication{Topic: eventgrid.Topic{Name: "fail"}}); !errors.Is(err, boom) {
		t.Errorf("Publish = %v, want boom", err)
	}
}

func TestSubscriptionObserver(t *testing.T) {
	var hooked []string
	o := &mock.SubscriptionObserver{
		PutFn:     func(s *eventgrid.EventSubscription) { hooked = append(hooked, "put "+s.Name) },
		DeletedFn: func(s *eventgrid.EventSubscription) { hooked = append(hooked, "delete "+s.Name) },
	}
	s := &eventgrid.EventSubscription{UID: 1, Topic: "t", Name: "s"}
	o.SubscriptionPut(s)
	s.Name = "renamed" // the recorder keeps a copy
	o.SubscriptionDeleted(&eventgrid.EventSubscription{UID: 1, Topic: "t", Name: "s"})

	var got []string
	for _, c := range o.Changes() {
		got = append(got, c.String())
	}
	if want := []string{"put t/s#1", "delete t/s#1"}; !slices.Equal(got, want) {
		t.Errorf("Changes = %v, want %v", got, want)
	}
	if want := []string{"put s", "delete s"}; !slices.Equal(hooked, want) {
		t.Errorf("hooks saw %v, want %v", hooked, want)
	}
	o.Reset()
	if len(o.Changes()) != 0 {
		t.Error("Reset kept changes")
	}
	var zero mock.SubscriptionObserver
	zero.SubscriptionPut(s)
	zero.SubscriptionDeleted(s)
	if len(zero.Changes()) != 2 {
		t.Error("zero value does not record")
	}
}
