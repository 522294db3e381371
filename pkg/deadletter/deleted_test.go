package deadletter_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/deadletter"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// TestWriter_DeletedSubscriptionStorageDown: letters waiting for storage
// that is down stop counting against the budget the moment their
// subscription is deleted (Done is called for each, once), and are then
// dropped, counted and logged, at the next failed write rather than after
// MaxWait.
func TestWriter_DeletedSubscriptionStorageDown(t *testing.T) {
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	az.Stop()
	m := &counts{}
	logs := &logbuf.Buffer{}
	w := deadletter.New(deadletter.Options{FlushInterval: time.Hour, RetryInterval: time.Hour, Metrics: m}, zerolog.New(logs))
	defer w.Close(context.Background())
	s := sub("s", eventgrid.EventGridSchema, connStr)
	var done atomic.Int64
	for i := range 5 {
		w.DeadLetter(letter(s, fmt.Sprintf(`{"id":"%d","data":{}}`, i), string(outcome.MaxDeliveryAttemptsExceeded), 500, push.OutcomeAborted, &done))
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		if m.failed.Load() < 1 {
			return fmt.Errorf("%d failed writes", m.failed.Load())
		}
		return nil
	})
	if done.Load() != 0 {
		t.Fatalf("%d letters done while they wait for storage", done.Load())
	}
	w.SubscriptionDeleted(s)
	if n := done.Load(); n != 5 {
		t.Fatalf("%d of 5 letters released when their subscription was deleted", n)
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		if m.dropped.Load() != 5 {
			return fmt.Errorf("%d of 5 letters dropped", m.dropped.Load())
		}
		return nil
	})
	if done.Load() != 5 {
		t.Errorf("Done called %d times for 5 letters", done.Load())
	}
	if !strings.Contains(logs.String(), "their subscription was deleted") {
		t.Errorf("no log line for the dropped letters: %s", logs.String())
	}
}

// TestWriter_DeletedSubscriptionStorageUp: letters of a deleted
// subscription are still written when storage takes them, at once, and
// each is done once.
func TestWriter_DeletedSubscriptionStorageUp(t *testing.T) {
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	m := &counts{}
	w := deadletter.New(deadletter.Options{FlushInterval: time.Hour, Metrics: m}, zerolog.Nop())
	defer w.Close(context.Background())
	s := sub("s", eventgrid.EventGridSchema, connStr)
	var done atomic.Int64
	w.DeadLetter(letter(s, `{"id":"0","data":{}}`, string(outcome.MaxDeliveryAttemptsExceeded), 500, push.OutcomeAborted, &done))
	brokertest.Eventually(t, 10*time.Second, func() error {
		if m.written.Load() != 1 {
			return fmt.Errorf("%d written", m.written.Load())
		}
		return nil
	})
	// The next letters wait for the hour-long flush interval.
	for i := 1; i < 4; i++ {
		w.DeadLetter(letter(s, fmt.Sprintf(`{"id":"%d","data":{}}`, i), string(outcome.MaxDeliveryAttemptsExceeded), 500, push.OutcomeAborted, &done))
	}
	w.SubscriptionDeleted(s)
	if n := done.Load(); n != 4 {
		t.Fatalf("%d of 4 letters released", n)
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		if n := len(allEvents(blobs(t, connStr))); n != 4 {
			return fmt.Errorf("%d of 4 letters in storage", n)
		}
		return nil
	})
	if done.Load() != 4 || m.dropped.Load() != 0 {
		t.Errorf("done %d, dropped %d; want 4 done once each and none dropped", done.Load(), m.dropped.Load())
	}
}
