package tests_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const nsAPI = "api-version=2024-06-01"

// queueBroker is a broker over plain HTTP with Prometheus metrics and topic
// "t" (CloudEvents); subs are its queue subscriptions, with queue settings.
func queueBroker(t *testing.T, queue map[string]any, subs []string, kv ...string) *broker {
	t.Helper()
	b := startBroker(t, merge(devEnv(), append([]string{"metrics__reporterType", "prometheus"}, kv...)...))
	createTopic(t, b.URL, "t", "CloudEventSchemaV1_0")
	for _, s := range subs {
		createSubscription(t, b.URL, "t", s, queueProps(queue))
	}
	return b
}

// bigEvent is a CloudEvent of size bytes.
func bigEvent(id string, size int) string {
	head := `{"specversion":"1.0","id":"` + id + `","source":"/big","type":"big","data":"`
	return head + strings.Repeat("x", size-len(head)-2) + `"}`
}

// publishCE publishes one structured CloudEvent with :publish.
func publishCE(t *testing.T, base, body string) {
	t.Helper()
	code, _, rb := do(t, nil, http.MethodPost, base+"/topics/t:publish?"+nsAPI, "application/cloudevents+json; charset=utf-8", body)
	if code != http.StatusOK {
		t.Fatalf("publish: %d %s", code, rb)
	}
}

// slowRead reads an answer at about rate bytes a second until it ends, is
// cut off, or ctx is done; it returns the bytes read.
func slowRead(ctx context.Context, r io.Reader, rate int) int64 {
	buf := make([]byte, rate/10)
	var n int64
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		k, err := io.ReadFull(r, buf)
		n += int64(k)
		if err != nil {
			return n
		}
		select {
		case <-ctx.Done():
			return n
		case <-tick.C:
		}
	}
}

// TestPull_SlowReadersMemory: 64 events of 1 MB on 4 queue subscriptions
// (the whole default queue budget of 256 MiB), and 8 readers that receive
// up to 100 events at a time and read their answers at 1 MB/s, over and
// over as their locks expire and the events come back. The answers stream
// from the events the queues hold, and a reader slower than the lock is cut
// off: the broker's peak resident memory stays under twice
// broker__maxQueuedBytes.
func TestPull_SlowReadersMemory(t *testing.T) {
	// Serial (see doc.go): measures the broker's memory.
	if raceEnabled {
		t.Skip("the race detector multiplies the broker's memory; this test measures it")
	}
	const maxBytes = 268435456
	subs := []string{"q0", "q1", "q2", "q3"}
	// 60 s locks last 1.2 s: readers are cut off and receive again.
	b := queueBroker(t, map[string]any{"maxDeliveryCount": 100}, subs, "broker__queueTimeScale", "0.02")
	for i := range 64 {
		publishCE(t, b.URL, bigEvent(fmt.Sprint("e", i), 1_000_000))
	}
	before := rssKB(t, b.cmd.Process.Pid, "VmRSS")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var (
		wg       sync.WaitGroup
		receives atomic.Int64
		read     atomic.Int64
	)
	// A small receive buffer, set before connecting, keeps the kernel from
	// growing it and taking the answers for the readers.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 256<<10) })
	}}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: dialer.DialContext}}
	for r := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := b.URL + "/topics/t/eventSubscriptions/" + subs[r%4] + ":receive?" + nsAPI + "&maxEvents=100&maxWaitTime=10"
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				receives.Add(1)
				read.Add(slowRead(ctx, resp.Body, 1<<20))
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	after, peak := rssKB(t, b.cmd.Process.Pid, "VmRSS"), rssKB(t, b.cmd.Process.Pid, "VmHWM")
	t.Logf("64 events of 1 MB on 4 queue subscriptions, 8 slow readers: %d receives, %d MB read; RSS %d MB before, %d MB after, peak %d MB (broker__maxQueuedBytes %d MB)",
		receives.Load(), read.Load()>>20, before>>10, after>>10, peak>>10, maxBytes>>20)
	if receives.Load() < 8 {
		t.Fatalf("only %d receives", receives.Load())
	}
	if peak<<10 >= 2*maxBytes {
		t.Errorf("peak RSS %d MB, not under 2 x broker__maxQueuedBytes (%d MB)", peak>>10, 2*maxBytes>>20)
	}
	if n := len(b.Logs("a receive answer was cut off before the client read it; its events are received again when their locks expire")); n == 0 {
		t.Errorf("no slow reader was cut off")
	}
}

// neverReads sends a receive of up to 100 events on a raw connection and
// never reads the answer.
func neverReads(t *testing.T, base, sub string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /topics/t/eventSubscriptions/%s:receive?%s&maxEvents=100 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", sub, nsAPI)
	return conn
}

// TestPull_SigtermSlowReader: a client that receives 32 MB and never reads
// the answer does not hold the stop: the broker exits within the grace
// answers get (5 s), not the events' 60 s locks or the stop timeout.
func TestPull_SigtermSlowReader(t *testing.T) {
	t.Parallel()
	b := queueBroker(t, nil, []string{"q"})
	for i := range 32 {
		publishCE(t, b.URL, bigEvent(fmt.Sprint("e", i), 1_000_000))
	}
	neverReads(t, b.URL, "q")
	eventually(t, 10*time.Second, func() error {
		if v, _ := mustScrape(t, b.URL).value("eventgrid_queue_events", "topic", "t", "subscription", "q", "state", "locked"); v != 32 {
			return fmt.Errorf("%v events locked, want 32", v)
		}
		return nil
	})
	start := time.Now()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the broker did not exit within 30 s of SIGTERM with a slow reader")
	}
	took := time.Since(start)
	t.Logf("the broker exited %v after SIGTERM with a slow reader of a 32 MB answer", took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Errorf("the broker took %v to exit; want the 5 s grace and little more", took)
	}
}

// TestPull_WaitingLimit: beyond broker__maxWaitingReceives a receive that
// would wait gets 503 with Retry-After naming the key; one that finds an
// event does not, and the waiting ones are served.
func TestPull_WaitingLimit(t *testing.T) {
	t.Parallel()
	b := queueBroker(t, nil, []string{"q", "r"}, "broker__maxWaitingReceives", "3")
	// Each waiting receive comes from its own loopback address: one client
	// may hold only half of the waiting receives.
	answers := make(chan int, 3)
	for i := range 3 {
		client := clientFrom(t, fmt.Sprintf("127.0.0.%d", 2+i))
		go func() {
			code, _, _ := do(t, client, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/q:receive?"+nsAPI+"&maxWaitTime=60", "", nil)
			answers <- code
		}()
	}
	eventually(t, 10*time.Second, func() error {
		if v, _ := mustScrape(t, b.URL).value("eventgrid_queue_receives_waiting", "topic", "t", "subscription", "q"); v != 3 {
			return fmt.Errorf("%v receives waiting", v)
		}
		return nil
	})
	code, h, body := do(t, nil, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/r:receive?"+nsAPI+"&maxWaitTime=60", "", nil)
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(string(body), "broker__maxWaitingReceives") {
		t.Fatalf("a fourth waiting receive: %d, Retry-After %q, %s; want 503 naming broker__maxWaitingReceives", code, h.Get("Retry-After"), body)
	}
	publishCE(t, b.URL, bigEvent("x", 200)) // one copy for q, one for r
	if code, _, body := do(t, nil, http.MethodPost, b.URL+"/topics/t/eventSubscriptions/r:receive?"+nsAPI+"&maxWaitTime=60", "", nil); code != http.StatusOK || !strings.Contains(string(body), `"id":"x"`) {
		t.Fatalf("a receive that finds an event: %d %s", code, body)
	}
	if code := <-answers; code != http.StatusOK {
		t.Fatalf("a waiting receive: %d", code)
	}
}

// procCPU returns the CPU time the process pid has used, user and system.
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100) // USER_HZ
}

// receivers keeps n receives waiting on sub, each acknowledging what it
// gets and receiving again, until ctx is done; acked counts the events.
func receivers(ctx context.Context, t *testing.T, base, sub string, n int, acked *atomic.Int64) *sync.WaitGroup {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * n}}
	t.Cleanup(client.CloseIdleConnections)
	url := base + "/topics/t/eventSubscriptions/" + sub
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+":receive?"+nsAPI+"&maxWaitTime=120", nil)
				resp, err := client.Do(req)
				if err != nil {
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				tok, ok := lockToken(body)
				if !ok {
					continue
				}
				req, _ = http.NewRequestWithContext(ctx, http.MethodPost, url+":acknowledge?"+nsAPI, strings.NewReader(`{"lockTokens":["`+tok+`"]}`))
				req.Header.Set("Content-Type", "application/json")
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					acked.Add(1)
				}
			}
		}()
	}
	return &wg
}

// lockToken is the first lock token of a receive answer.
func lockToken(body []byte) (string, bool) {
	_, rest, ok := strings.Cut(string(body), `"lockToken":"`)
	if !ok {
		return "", false
	}
	tok, _, ok := strings.Cut(rest, `"`)
	return tok, ok
}

// cpuPerEvent publishes events one at a time, each once the one before was
// acknowledged, and returns the broker's CPU time per event.
func cpuPerEvent(t *testing.T, b *broker, events int, acked *atomic.Int64) time.Duration {
	t.Helper()
	start, base := procCPU(t, b.cmd.Process.Pid), acked.Load()
	for i := range events {
		publishCE(t, b.URL, bigEvent(fmt.Sprint("c", i), 300))
		eventually(t, 10*time.Second, func() error {
			if got := acked.Load() - base; got < int64(i+1) {
				return fmt.Errorf("%d of %d events acknowledged", got, i+1)
			}
			return nil
		})
	}
	return (procCPU(t, b.cmd.Process.Pid) - start) / time.Duration(events)
}

// TestPull_WakeCPU: a publish wakes one waiting receive, not all of them:
// the broker's CPU per event with 1,000 receives waiting is within twice
// what it is with one.
func TestPull_WakeCPU(t *testing.T) {
	// Serial (see doc.go): measures the broker's CPU time.
	if raceEnabled {
		t.Skip("the race detector changes what this test measures: the broker's CPU time")
	}
	const events = 300
	b := queueBroker(t, nil, []string{"one", "many"}, "broker__maxWaitingReceives", "2000")
	measure := func(sub string, n int) time.Duration {
		ctx, cancel := context.WithCancel(context.Background())
		var acked atomic.Int64
		wg := receivers(ctx, t, b.URL, sub, n, &acked)
		defer func() { cancel(); wg.Wait() }()
		eventually(t, 60*time.Second, func() error {
			if v, _ := mustScrape(t, b.URL).value("eventgrid_queue_receives_waiting", "topic", "t", "subscription", sub); v != float64(n) {
				return fmt.Errorf("%v of %d receives waiting", v, n)
			}
			return nil
		})
		return cpuPerEvent(t, b, events, &acked)
	}
	one := measure("one", 1)
	many := measure("many", 1000)
	t.Logf("broker CPU per event: %v with 1 receive waiting, %v with 1,000 (%.2fx)", one, many, float64(many)/float64(one))
	if many > 2*one {
		t.Errorf("broker CPU per event %v with 1,000 receives waiting, more than twice the %v with one", many, one)
	}
}
