package metrics_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/outcome"
	"github.com/edgegrid/edgegrid/pkg/push"
)

func BenchmarkPrometheus(b *testing.B) {
	p := metrics.NewPrometheus()
	sub := newSub(1, "t", "s")
	p.SubscriptionPut(sub)
	b.Run("Published", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.Published("t", http.StatusOK, time.Millisecond, 1, 0)
			}
		})
	})
	b.Run("Attempt", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.Record(outcome.Record{Kind: outcome.Attempted, Sub: sub, Events: 1, Latency: time.Millisecond})
			}
		})
	})
	b.Run("FirstAttempt", func(b *testing.B) {
		firsts := []time.Duration{time.Millisecond}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p.Record(outcome.Record{Kind: outcome.Started, Sub: sub, Events: 1, FirstDelays: firsts})
			}
		})
	})
}

// BenchmarkPrometheus_Scrape scrapes 100 topics of 5 subscriptions each.
func BenchmarkPrometheus_Scrape(b *testing.B) {
	p := metrics.NewPrometheus()
	var qs []push.QueueStats
	for i := range 500 {
		s := newSub(uint64(i+1), fmt.Sprintf("topic-%d", i/5), fmt.Sprintf("sub-%d", i))
		p.SubscriptionPut(s)
		p.Published(s.Topic, http.StatusOK, time.Millisecond, 1, 0)
		attempt(p, s, 1, time.Millisecond, nil)
		qs = append(qs, push.QueueStats{Subscription: s, Ready: i})
	}
	p.Collect(func() push.Stats { return push.Stats{Queues: qs} })
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Get(srv.URL)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
