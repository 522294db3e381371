package tests_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/edgegrid/edgegrid/pkg/testkit/azurite"
)

// TestStorageQueue_PartialBatch: a proxy in front of Azurite fails the
// third enqueue of a batch; the retry sends only the events not enqueued,
// so every event is in the queue exactly once.
func TestStorageQueue_PartialBatch(t *testing.T) {
	t.Parallel()
	az := azurite.Start(t)
	q, err := azqueue.NewQueueClientFromConnectionString(az.ConnectionString(azurite.Key), "events", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Create(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse(az.QueueURL())
	target.Path = ""
	rp := httputil.NewSingleHostReverseProxy(target)
	var enqueues atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/events/messages") && enqueues.Add(1) == 3 {
			w.Header().Set("x-ms-error-code", "ServerBusy")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	connStr := "DefaultEndpointsProtocol=http;AccountName=" + azurite.Account + ";AccountKey=" + azurite.Key +
		";QueueEndpoint=" + proxy.URL + "/" + azurite.Account + ";"

	b := startBroker(t, fastEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "sq", map[string]any{"destination": storageQueueDest(connStr, "events", "maxEventsPerBatch", 10)})
	publish(t, b.URL, "t", egEvents("p", 6))
	ids := map[string]int{}
	eventually(t, 20*time.Second, func() error {
		queueIDs(t, q, ids)
		if len(ids) != 6 {
			return fmt.Errorf("queue holds %v", ids)
		}
		return nil
	})
	// Let any duplicate arrive before counting.
	eventually(t, 10*time.Second, func() error {
		if n := enqueues.Load(); n < 7 {
			return fmt.Errorf("%d enqueue requests so far", n)
		}
		return nil
	})
	queueIDs(t, q, ids)
	for id, n := range ids {
		if n != 1 {
			t.Errorf("event %s enqueued %d times", id, n)
		}
	}
	t.Logf("%d enqueue requests for 6 events, one refused; queue holds %v", enqueues.Load(), ids)
	if n := enqueues.Load(); n != 7 {
		t.Errorf("%d enqueue requests, want 7: six events and the one refused", n)
	}
}

// TestEdgeHub_SpaceInOutputName: an output name with a space is sent on a
// valid topic (%20, never the '+' wildcard), and a second subscription on
// the same MQTT connection delivers throughout.
func TestEdgeHub_SpaceInOutputName(t *testing.T) {
	t.Parallel()
	b, _, sub := startEdgeHubBroker(t, false)
	createTopic(t, b.URL, "t", "EventGridSchema")
	edgeHub := func(output string) map[string]any {
		return map[string]any{"destination": map[string]any{"endpointType": "EdgeHub", "properties": map[string]any{
			"outputName": output,
			"deliveryAttributeMappings": []any{map[string]any{"name": "x+y#z", "type": "Static",
				"properties": map[string]any{"value": "a #b", "isSecret": false}}},
		}}}
	}
	createSubscription(t, b.URL, "t", "spaced", edgeHub("out put"))
	createSubscription(t, b.URL, "t", "plain", edgeHub("plain"))
	const prefix = "devices/gw1/modules/eventgridmodule/messages/events/%24.on="
	const bag = "&%24.ct=application%2Fjson&%24.ce=utf-8&x%2By%23z=a%20%23b/"
	ids := func(topic string) map[string]bool {
		out := map[string]bool{}
		for _, m := range sub.Messages() {
			if m.Topic != topic {
				continue
			}
			var evs []map[string]any
			if err := json.Unmarshal([]byte(m.Payload), &evs); err != nil {
				t.Fatalf("body %s: %v", m.Payload, err)
			}
			for _, ev := range evs {
				out[fmt.Sprint(ev["id"])] = true
			}
		}
		return out
	}
	start := time.Now()
	for round := range 5 {
		publish(t, b.URL, "t", egEvents(fmt.Sprintf("r%d-", round), 4))
		eventually(t, 10*time.Second, func() error {
			for _, topic := range []string{prefix + "out%20put" + bag, prefix + "plain" + bag} {
				got := ids(topic)
				for i := range 4 {
					if id := fmt.Sprintf("r%d-%d", round, i); !got[id] {
						return fmt.Errorf("round %d: %s not received on %s (%d messages in all)", round, id, topic, len(sub.Messages()))
					}
				}
			}
			return nil
		})
	}
	t.Logf("5 rounds of 4 events reached both outputs in %v", time.Since(start).Round(time.Millisecond))
	for _, m := range sub.Messages() {
		if !strings.HasPrefix(m.Topic, prefix) || strings.ContainsAny(m.Topic, "+# ") {
			t.Errorf("message on topic %q", m.Topic)
		}
	}
	if n := len(b.Logs("lost the connection to edgeHub")); n != 0 {
		t.Errorf("the connection to edgeHub was lost %d times", n)
	}
}

// brokerRSS reads the broker's resident memory, in bytes.
func brokerRSS(t *testing.T, b *broker) int64 {
	t.Helper()
	return rssKB(t, b.cmd.Process.Pid, "VmRSS") << 10
}

// TestBodies_SlowUploadsMemory: 1,000 clients each declare a body of the
// largest size and send one byte of it. The broker's memory follows the
// bytes that arrived, not the declared lengths (under 200 MB), and returns
// once the clients go (under 100 MB).
func TestBodies_SlowUploadsMemory(t *testing.T) {
	// Serial (see doc.go): measures the broker's memory.
	if raceEnabled {
		t.Skip("the race detector multiplies the broker's memory; this test measures it")
	}
	const conns, declared = 1000, 1058576
	b := startBroker(t, cloudEnv("api__requestTimeoutInSeconds", "120"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	before := brokerRSS(t, b)
	goroutines := func() float64 {
		v, _ := mustScrape(t, b.URL).value("go_goroutines")
		return v
	}
	idle := goroutines()
	addr := strings.TrimPrefix(b.URL, "http://")
	open := make([]net.Conn, 0, conns)
	t.Cleanup(func() {
		for _, c := range open {
			c.Close()
		}
	})
	head := fmt.Sprintf("POST /topics/t/events?%s HTTP/1.1\r\nHost: edgegrid\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n[", apiVersion, declared)
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", len(open)+1, err)
		}
		open = append(open, c)
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
	}
	// Every upload is being read once the broker serves a goroutine per
	// connection.
	eventually(t, 60*time.Second, func() error {
		if n := goroutines(); n < idle+conns {
			return fmt.Errorf("%v goroutines, want %v: not every upload is being read yet", n, idle+conns)
		}
		return nil
	})
	during := brokerRSS(t, b)
	t.Logf("broker RSS %d MB before, %d MB with %d uploads each declaring %d bytes and sending 1", before>>20, during>>20, conns, declared)
	if during > 200<<20 {
		t.Errorf("broker RSS %d MB with %d slow uploads, want under 200 MB", during>>20, conns)
	}
	for _, c := range open {
		c.Close()
	}
	open = open[:0]
	gone := time.Now()
	var after int64
	eventually(t, 10*time.Second, func() error {
		if after = brokerRSS(t, b); after >= 100<<20 {
			return fmt.Errorf("broker RSS %d MB after the uploads went, want under 100 MB", after>>20)
		}
		return nil
	})
	t.Logf("broker RSS %d MB %v after the uploads went", after>>20, time.Since(gone).Round(time.Millisecond))
	// The broker still serves.
	publish(t, b.URL, "t", egEvents("after", 1))
}

// TestDeadLetter_Throughput: one subscription dead-letters 2,000 events a
// second for 6 s against Azurite. Storage keeps up (at least 1,000 letters
// a second written), so no publish is refused while it is healthy, and
// every letter reaches storage.
func TestDeadLetter_Throughput(t *testing.T) {
	// Serial (see doc.go): measures a rate.
	const perRequest, requestsPerSecond, seconds = 100, 20, 6
	const total = perRequest * requestsPerSecond * seconds
	az := azurite.Start(t)
	connStr := az.ConnectionString(azurite.Key)
	b := startBroker(t, cloudEnv(
		"broker__deadLetterFlushIntervalInSeconds", "2",
		"broker__maxQueuedEventsPerSubscription", "4000"))
	k := newSink(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "dl", map[string]any{
		"destination":           webhookDest(k.URL, "maxEventsPerBatch", 50),
		"retryPolicy":           map[string]any{"maxDeliveryAttempts": 1},
		"deadLetterDestination": deadLetterDest(connStr),
	})
	written := func() float64 {
		v, _ := mustScrape(t, b.URL).value("eventgrid_dead_letter_written_total", "subscription", "dl")
		return v
	}
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	tick := time.NewTicker(time.Second / requestsPerSecond)
	defer tick.Stop()
	refused := 0
	for i := range requestsPerSecond * seconds {
		<-tick.C
		code, _, body := do(t, client, http.MethodPost, b.URL+"/topics/t/events?"+apiVersion, "application/json", egEvents(fmt.Sprintf("r%d-", i), perRequest))
		if code != http.StatusOK {
			refused++
			t.Errorf("request %d: %d %s", i, code, body)
		}
	}
	published := time.Since(start)
	// Every full blob's worth is written at once; what does not fill a
	// blob waits for the 2 s interval.
	var full time.Duration
	eventually(t, 30*time.Second, func() error {
		if n := written(); n < total-1000 {
			return fmt.Errorf("%v of %d dead letters written", n, total)
		}
		full = time.Since(start)
		return nil
	})
	eventually(t, 30*time.Second, func() error {
		if n := written(); n != total {
			return fmt.Errorf("%v of %d dead letters written", n, total)
		}
		return nil
	})
	rate := float64(total-1000) / full.Seconds()
	t.Logf("%d letters published in %v (%d refused); %d written within %v of the start: %.0f letters/s",
		total, published.Round(time.Millisecond), refused, total-1000, full.Round(time.Millisecond), rate)
	if rate < 1000 {
		t.Errorf("%.0f letters/s written, want at least 1,000", rate)
	}
	if n := len(deadLetters(t, connStr)); n != total {
		t.Errorf("%d distinct dead letters in storage, want %d", n, total)
	}
}
