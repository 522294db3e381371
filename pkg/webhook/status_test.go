package webhook_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/delivery"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// TestSender_Outcomes checks that what Send returns classifies as
// docs/design.md#status-classes and docs/design.md#dead-lettering
// say: the status, Retry-After, timeouts and connection failures.
func TestSender_Outcomes(t *testing.T) {
	answer := func(status int, retryAfter string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(status)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	s := webhook.New(webhook.Options{})
	send := func(url string, timeout time.Duration) delivery.Result {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return delivery.Classify(s.Send(ctx, batch(webhookSub(url, eventgrid.EventGridSchema), 0, egEvent("1", "t"))))
	}
	tests := []struct {
		status     int
		retryAfter string
		want       delivery.Result
	}{
		{200, "", delivery.Result{Outcome: delivery.OutcomeDelivered}},
		{400, "", delivery.Result{Outcome: delivery.OutcomeBadRequest, StatusCode: 400}},
		{404, "", delivery.Result{Outcome: delivery.OutcomeNotFound, StatusCode: 404}},
		{413, "", delivery.Result{Outcome: delivery.OutcomePayloadTooLarge, StatusCode: 413}},
		{429, "120", delivery.Result{Outcome: delivery.OutcomeBusy, StatusCode: 429, RetryAfter: 2 * time.Minute}},
		{503, "", delivery.Result{Outcome: delivery.OutcomeBusy, StatusCode: 503}},
		{500, "", delivery.Result{Outcome: delivery.OutcomeAborted, StatusCode: 500}},
	}
	for _, tt := range tests {
		if got := send(answer(tt.status, tt.retryAfter).URL, 5*time.Second); got != tt.want {
			t.Errorf("status %d: %+v, want %+v", tt.status, got, tt.want)
		}
	}
	t.Run("RetryAfterDate", func(t *testing.T) {
		at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
		got := send(answer(503, at).URL, 5*time.Second)
		if got.RetryAfter < 80*time.Second || got.RetryAfter > 91*time.Second {
			t.Errorf("Retry-After %s read as %v", at, got.RetryAfter)
		}
	})
	t.Run("TimedOut", func(t *testing.T) {
		hang := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
		defer srv.Close()
		defer close(hang)
		if got := send(srv.URL, 200*time.Millisecond); got.Outcome != delivery.OutcomeTimedOut {
			t.Errorf("no answer in time: %+v", got)
		}
	})
	t.Run("SocketError", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close()
		if got := send(url, 5*time.Second); got.Outcome != delivery.OutcomeSocketError {
			t.Errorf("connection refused: %+v", got)
		}
	})
}

func TestSender_HeadersBatchAndKey(t *testing.T) {
	k := newSink(t)
	s := webhook.New(webhook.Options{})
	ev := func(id, version string) *eventgrid.Event {
		e := egEvent(id, "t")
		e.Body = []byte(strings.Replace(string(e.Body), `"dataVersion":"2.0"`, `"dataVersion":"`+version+`"`, 1))
		return e
	}
	sub := webhookSub(k.URL, eventgrid.EventGridSchema)
	if err := s.Send(context.Background(), batch(sub, 0, ev("1", "2.0"), ev("2", "3.0"))); err != nil {
		t.Fatal(err)
	}
	if h := k.last(t).header; h.Values("aeg-data-version") != nil {
		t.Errorf("a batch of mixed versions sent aeg-data-version %q", h.Get("aeg-data-version"))
	}
	if err := s.Send(context.Background(), batch(sub, 0, ev("1", "2.0"), ev("2", "2.0"))); err != nil {
		t.Fatal(err)
	}
	if got := k.last(t).header.Get("aeg-data-version"); got != "2.0" {
		t.Errorf("a batch of one version sent aeg-data-version %q", got)
	}
	eg := webhookSub(k.URL, eventgrid.EventGridSchema)
	eg.Destination.EndpointType = eventgrid.EventGrid
	if err := s.Send(context.Background(), batch(eg, 0, ev("1", "2.0"))); err != nil {
		t.Fatal(err)
	}
	if h := k.last(t).header; h.Values("aeg-sas-key") != nil {
		t.Errorf("an EventGrid destination without a key sent aeg-sas-key %q", h.Get("aeg-sas-key"))
	}
}
