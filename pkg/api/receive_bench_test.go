package api_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// BenchmarkReceiveAcknowledge measures the broker's side of pull delivery:
// one :receive of 100 events of 1 KiB, from a backlog, and one
// :acknowledge of their lock tokens, over HTTP on loopback, with 20,000
// events waiting behind them. The client
// reads the answer with the rawjson walker, to add little of its own.
func BenchmarkReceiveAcknowledge(b *testing.B) {
	const batch, backlog = 100, 20000
	qs := newQueueServer(b, queue.Options{})
	event := []byte(`{"specversion":"1.0","id":"1","source":"/bench","type":"t","data":"` + strings.Repeat("x", 940) + `"}`)
	for range backlog / batch {
		qs.seed(b, batch, event)
	}
	sub := qs.URL + "/topics/t/eventSubscriptions/q"
	receive := sub + ":receive?api-version=" + nsVersion + "&maxEvents=100&maxWaitTime=10"
	ack := sub + ":acknowledge?api-version=" + nsVersion
	client := &http.Client{}
	defer client.CloseIdleConnections()
	var body bytes.Buffer
	b.SetBytes(int64(batch * len(event)))
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		qs.seed(b, batch, event) // the backlog stays as long
		b.StartTimer()
		t0 := cpuTime()
		got := benchPost(b, client, receive, nil)
		body.Reset()
		body.WriteString(`{"lockTokens":[`)
		n := 0
		value, _ := rawjson.Member(got, "value")
		rawjson.ArrayEach(value, func(_ int, v []byte) bool {
			token, _ := rawjson.Lookup(v, []string{"brokerProperties", "lockToken"})
			if n > 0 {
				body.WriteByte(',')
			}
			body.Write(token)
			n++
			return true
		})
		body.WriteString(`]}`)
		if n != batch {
			b.Fatalf("received %d events, want %d", n, batch)
		}
		benchPost(b, client, ack, body.Bytes())
		cpu += cpuTime() - t0
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used: the broker's side and the
// client's of the benchmark.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchPost(b *testing.B, c *http.Client, url string, body []byte) []byte {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("POST %s: %d %v %.200s", url, resp.StatusCode, err, got)
	}
	return got
}
