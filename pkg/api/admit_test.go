package api_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// TestPublish_AdmitBeforeReading checks that a full broker refuses a publish
// request before reading its body, with 503 and Retry-After, and that the
// admission check is told the declared size.
func TestPublish_AdmitBeforeReading(t *testing.T) {
	var full atomic.Bool
	var asked atomic.Int64
	ts := MustOpenServer(t, withServices(func(o *api.Services) {
		o.Admitter = admitFunc(func(_ context.Context, n int64) bool { asked.Store(n); return !full.Load() })
	}))
	ts.MustPutTopic(t, "t", "")
	ts.MustPutSubscription(t, "t", "s", webhook(nil))
	body := brokertest.MustJSON(t, []any{egEvent("1")})

	if r := ts.do(t, http.MethodPost, "/topics/t/events", ctJSON, body); r.Status != http.StatusOK {
		t.Fatalf("publish with room: %d", r.Status)
	}
	if asked.Load() != int64(len(body)) {
		t.Errorf("Admit was asked about %d bytes, want the declared %d", asked.Load(), len(body))
	}
	full.Store(true)
	r := ts.do(t, http.MethodPost, "/topics/t/events", ctJSON, body)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("publish while full: %d, Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	if e := brokertest.MustDecodeError(t, r.Body); e.Error.Details.Code != eventgrid.EQueueFull {
		t.Errorf("details.code = %s", e.Error.Details.Code)
	}
	if n := len(ts.Recorder.Calls()); n != 1 {
		t.Errorf("%d publications recorded, want only the first", n)
	}
}

// TestPublish_NoSubscriptionsNeverFull: a topic without subscriptions queues
// nothing, so a full broker does not refuse it.
func TestPublish_NoSubscriptionsNeverFull(t *testing.T) {
	ts := MustOpenServer(t, withServices(func(o *api.Services) {
		o.Admitter = admitFunc(func(context.Context, int64) bool { return false })
	}))
	ts.MustPutTopic(t, "empty", "")
	body := brokertest.MustJSON(t, []any{egEvent("1")})
	if r := ts.do(t, http.MethodPost, "/topics/empty/events", ctJSON, body); r.Status != http.StatusOK {
		t.Fatalf("publish to a topic without subscriptions on a full broker: %d %s", r.Status, r.Body)
	}
}

// admitFunc adapts a function to api.Admitter: false is the broker full.
type admitFunc func(ctx context.Context, bytes int64) bool

func (f admitFunc) Admit(ctx context.Context, bytes int64) error {
	if f(ctx, bytes) {
		return nil
	}
	return eventgrid.Errorf(eventgrid.EQueueFull, "The broker holds its limit of queued events; retry later.")
}
