package delivery

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
	"github.com/rs/zerolog"
)

type refusingSender struct{}

func (refusingSender) Send(context.Context, *Batch) error { return context.Canceled }

// TestTake_DueRetriesGoFirst: an event whose retry has fallen due goes
// before the events that wait for their first attempt, and the retries
// keep the order they fell due in; events never tried keep theirs.
func TestTake_DueRetriesGoFirst(t *testing.T) {
	clock := fakeclock.New()
	o := DefaultOptions()
	o.Clock = clock
	o.MaxPerSubscription = 1
	e := New(o, refusingSender{}, NopMetrics{}, zerolog.Nop())
	defer e.Close(context.Background())
	sub := &eventgrid.EventSubscription{UID: 1, Topic: "t", Name: "s", EventDeliverySchema: eventgrid.EventGridSchema,
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:1/"}}
	e.SubscriptionPut(sub)
	q := e.queueOf(sub)
	h := &budget.Hold{Accepted: clock.Now()}
	now := e.nanos(clock.Now())
	ev := func(id string, attempts int32, due int64) item {
		return item{body: []byte(`{"id":"` + id + `"}`), s: h, attempts: attempts, due: due}
	}
	q.mu.Lock()
	for _, id := range []string{"new1", "new2"} {
		q.ready.push(ev(id, 0, 0))
	}
	q.backoff[0].push(ev("retry1", 1, now-2))
	q.backoff[0].push(ev("retry2", 1, now-1))
	q.backoff[0].push(ev("later", 1, now+int64(time.Minute)))
	q.backoff[1].push(ev("retry3", 5, now))
	var got []string
	for range 5 {
		var b taken
		if !q.takeLocked(clock.Now(), &b) {
			t.Fatalf("nothing to take after %v", got)
		}
		got = append(got, string(b.Bodies[0][7:len(b.Bodies[0])-2]))
		q.inflight-- // as if the request had ended, without its outcome
	}
	stats := q.readyLen()
	// The events hold no budget: they leave without giving any back.
	q.ready, q.retries, q.backoff = deque{}, deque{}, [2]deque{}
	q.mu.Unlock()
	if want := "[retry1 retry2 retry3 new1 new2]"; fmt.Sprint(got) != want {
		t.Errorf("taken in the order %v, want %s", got, want)
	}
	if stats != 0 {
		t.Errorf("%d still ready, want 0 (the later retry is not due)", stats)
	}
}
