package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// BenchmarkSend measures one unbatched delivery, the request of scenario a
// of scripts/bench: one EventGridSchema event of about 1 KiB to a webhook
// on loopback that reads the body and answers 200 with none. The
// allocations counted are the process's: the sender's, its transport's and
// the server's.
func BenchmarkSend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	s := webhook.New(webhook.Options{UserAgent: "edgegrid/bench"})
	body := []byte(`{"id":"1","topic":"t1","subject":"s","eventType":"T","eventTime":"2020-01-01T00:00:00Z","data":{"p":"` +
		strings.Repeat("x", 900) + `"},"dataVersion":"2.0","metadataVersion":"1"}`)
	batch := &push.Batch{Subscription: webhookSub(srv.URL+"/api/events", eventgrid.EventGridSchema),
		Bodies: [][]byte{body}, DeliveryCount: 0}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := s.Send(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}
