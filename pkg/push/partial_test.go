package push_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// partialError says the destination took the first n events.
type partialError struct{ n int }

func (e partialError) Error() string { return fmt.Sprintf("took %d events, then failed", e.n) }
func (e partialError) Accepted() int { return e.n }

// TestEngine_PartialSuccess: after an attempt whose destination took the
// first events of the batch, only the others are retried.
func TestEngine_PartialSuccess(t *testing.T) {
	var calls atomic.Int32
	s := &sender{SendFn: func(context.Context, *push.Batch) error {
		if calls.Add(1) == 1 {
			return partialError{2}
		}
		return nil
	}}
	m := newMetrics()
	e := mustEngine(t, fastOptions(), s, m)
	sub := newSub(e, "s", func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 10 })
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("a", 50), newEvent("b", 50), newEvent("c", 50), newEvent("d", 50))
	brokertest.Eventually(t, 5*time.Second, func() error {
		if st := e.Stats(); st.QueuedEvents != 0 || st.QueuedBytes != 0 {
			return fmt.Errorf("still queued: %+v", st)
		}
		return nil
	})
	bs := s.Calls()
	if len(bs) != 2 || !slices.Equal(bs[0].IDs(), []string{"a", "b", "c", "d"}) || !slices.Equal(bs[1].IDs(), []string{"c", "d"}) {
		t.Fatalf("batches %+v, want [a b c d] then only [c d]", bs)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.attempts["s"] != 6 {
		t.Errorf("%d event attempts counted, want 6", m.attempts["s"])
	}
}
