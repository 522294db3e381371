package queue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/dispatch"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/testkit/fakeclock"
)

// TestLockExpiryLog: the line about expired locks says how many events are
// available again, and does not claim it of an event dropped at the same
// moment for its delivery count.
func TestLockExpiryLog(t *testing.T) {
	var buf bytes.Buffer
	clock := fakeclock.New()
	s := queue.New(queue.Options{Clock: clock, DeliveryLogs: eventgrid.DeliveryLogs{LogDeliveryFailure: true}}, zerolog.New(&buf))
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	once := queueSub(1, "once", 60, 1, time.Hour)
	twice := queueSub(2, "twice", 60, 2, time.Hour)
	s.SubscriptionPut(once)
	s.SubscriptionPut(twice)
	f := &fixture{t: t, clock: clock, store: s, d: dispatch.New(dispatch.Options{Queues: s})}
	f.mustPublish(1, once)
	f.mustPublish(1, twice)
	f.receive(once, 1)
	f.receive(twice, 1)
	clock.Advance(time.Minute)

	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["message"] != "events dropped" {
			lines[m["subscription"].(string)] = m
		}
	}
	for name, again := range map[string]float64{"once": 0, "twice": 1} {
		l := lines[name]
		if l == nil || l["events"] != 1.0 || l["availableAgain"] != again || strings.Contains(l["message"].(string), "available again") {
			t.Errorf("lock expiry line of %s: %v; want events 1, availableAgain %v", name, l, again)
		}
	}
}
