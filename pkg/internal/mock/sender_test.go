package mock_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	dl "github.com/edgegrid/edgegrid/pkg/push"
)

func sendBatch(t *testing.T, s *mock.Sender, sub string, count int, ids ...string) error {
	t.Helper()
	b := &dl.Batch{Subscription: &eventgrid.EventSubscription{Name: sub}, DeliveryCount: count}
	for _, id := range ids {
		b.Bodies = append(b.Bodies, []byte(`{"id":"`+id+`"}`))
	}
	err := s.Send(t.Context(), b)
	for _, body := range b.Bodies {
		copy(body, "xxxxxxxxx") // the engine reuses the batch
	}
	return err
}

func TestSender(t *testing.T) {
	boom := errors.New("boom")
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &mock.Sender{
		Now: func() time.Time { return at },
		SendFn: func(_ context.Context, b *dl.Batch) error {
			if b.DeliveryCount == 0 {
				return boom
			}
			return nil
		},
	}
	if err := sendBatch(t, s, "a", 0, "1", "2"); !errors.Is(err, boom) {
		t.Fatalf("Send = %v, want what SendFn returned", err)
	}
	_ = sendBatch(t, s, "a", 1, "1", "2")
	_ = sendBatch(t, s, "b", 1, "1")
	calls := s.Calls()
	if len(calls) != 3 || !calls[0].At.Equal(at) || calls[0].Err != boom || calls[1].DeliveryCount != 1 {
		t.Fatalf("Calls = %+v", calls)
	}
	if ids := calls[1].IDs(); !slices.Equal(ids, []string{"1", "2"}) {
		t.Errorf("IDs = %v, want the copies' 1 2", ids)
	}
	if got := s.Delivered("a"); !maps.Equal(got, map[string]int{"1": 1, "2": 1}) {
		t.Errorf("Delivered(a) = %v, want the accepted call only", got)
	}
	if n := s.Accepted(); n != 3 {
		t.Errorf("Accepted = %d, want 3", n)
	}

	t.Run("Discard", func(t *testing.T) {
		s := &mock.Sender{Discard: true}
		_ = sendBatch(t, s, "a", 0, "1", "2")
		if len(s.Calls()) != 0 || s.Accepted() != 2 {
			t.Errorf("Discard kept %d calls, counted %d events", len(s.Calls()), s.Accepted())
		}
	})
}
