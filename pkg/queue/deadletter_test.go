package queue_test

import (
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// TestDeadLetterRecord: a queue subscription's dead letter says why the
// event was given up on and how its last receive ended, never "None": a
// rejection, a release past the delivery count, a lock that expired past
// it, and an event never received that outlived its time to live.
func TestDeadLetterRecord(t *testing.T) {
	sub := queueSub(1, "app", 60, 1, 2*time.Minute)
	sub.DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob, ContainerName: "dl"}
	f := newFixture(t, queue.Options{}, sub)
	published := f.clock.Now()
	f.mustPublish(4, sub)
	got := f.receive(sub, 3)
	received := f.clock.Now()
	if _, err := f.store.Reject(sub, tokens(got[:1])); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Release(sub, tokens(got[1:2]), 0); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute) // the third lock expires
	f.clock.Advance(time.Minute) // the fourth event outlives its time to live
	type want struct {
		reason   outcome.Reason
		outcome  string
		attempts int
	}
	wants := map[string]want{
		"1": {outcome.Rejected, queue.OutcomeRejected, 1},
		"2": {outcome.MaxDeliveryCountExceeded, queue.OutcomeReleased, 1},
		"3": {outcome.MaxDeliveryCountExceeded, queue.OutcomeLockExpired, 1},
		"4": {outcome.TimeToLiveExceeded, queue.OutcomeNeverReceived, 0},
	}
	f.rec.mu.Lock()
	letters := append([]eventgrid.DeadLetter(nil), f.rec.letters...)
	f.rec.mu.Unlock()
	if len(letters) != len(wants) {
		t.Fatalf("%d dead letters, want %d", len(letters), len(wants))
	}
	for _, l := range letters {
		v, _ := rawjson.Member(l.Body, "id")
		id, _ := rawjson.Unquote(v)
		w := wants[id]
		if l.Reason != string(w.reason) || l.LastOutcome != w.outcome || l.Attempts != w.attempts || l.LastStatus != 0 ||
			!l.Published.Equal(published) || l.Subscription != sub {
			t.Errorf("event %s: %+v; want reason %s, last outcome %s after %d receives", id, l, w.reason, w.outcome, w.attempts)
		}
		if wantAt := received; w.attempts == 0 && !l.LastAttempt.IsZero() || w.attempts > 0 && !l.LastAttempt.Equal(wantAt) {
			t.Errorf("event %s: last attempt %v, want %v (zero if never received)", id, l.LastAttempt, wantAt)
		}
	}
}
