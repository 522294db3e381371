package api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// startUpload opens a connection and sends the headers of a publish request
// declaring declared bytes, then sent of them.
func startUpload(t *testing.T, base, path string, declared, sent int) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: edgegrid\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, declared)
	if _, err := conn.Write(bytes.Repeat([]byte(" "), sent)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readResponse reads the answer on conn.
func readResponse(t *testing.T, conn net.Conn) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestBodyBudget: slow uploads hold only the chunks they have filled, the
// budget of bodies being read refuses with 503 and Retry-After once full,
// and it is given back when the uploads end.
func TestBodyBudget(t *testing.T) {
	const chunk = 16 << 10
	ts := MustOpenServer(t, withAPI(func(o *api.Options) {
		o.MaxBodyBytesInFlight = 4 * chunk
		o.RetryAfter = 3 * time.Second
	}))
	ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	path := "/topics/t/events?api-version=" + edgeVersion

	// Four uploads declaring 1 MB each hold one chunk each: the budget of
	// four chunks would not hold one declared length.
	var slow []net.Conn
	for range 4 {
		slow = append(slow, startUpload(t, ts.URL, path, 1<<20, 1))
	}
	// The fifth is refused once the four hold their chunks; until then it
	// may get in, so retry with fresh connections.
	var resp *http.Response
	var body string
	brokertest.Eventually(t, 10*time.Second, func() error {
		conn := startUpload(t, ts.URL, path, 1<<20, 1<<20)
		resp, body = readResponse(t, conn)
		if resp.StatusCode != http.StatusServiceUnavailable {
			return fmt.Errorf("answered %d, want 503", resp.StatusCode)
		}
		return nil
	})
	if resp.Header.Get("Retry-After") != "3" {
		t.Errorf("Retry-After = %q, want 3", resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(body, "api__maxBodyBytesInFlight") || !strings.Contains(body, `"ServiceUnavailable"`) {
		t.Errorf("body = %s, want the error envelope naming api__maxBodyBytesInFlight", body)
	}

	// The slow uploads end: the budget is free again.
	for _, c := range slow {
		c.Close()
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		r := ts.do(t, http.MethodPost, "/topics/t/events", ctJSON, strings.Repeat(" ", 40<<10)+"[]")
		if r.Status != http.StatusOK {
			return fmt.Errorf("answered %d %s, want 200", r.Status, r.Body)
		}
		return nil
	})
}

// TestBodyReadTimeout: a body cut short answers, after the request timeout,
// that it timed out.
func TestBodyReadTimeout(t *testing.T) {
	ts := MustOpenServer(t, withAPI(func(o *api.Options) { o.RequestTimeout = 500 * time.Millisecond }))
	ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	conn := startUpload(t, ts.URL, "/topics/t/events?api-version="+edgeVersion, 100, 10)
	resp, body := readResponse(t, conn)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "timed out") || !strings.Contains(body, "10 of its 100 bytes") {
		t.Fatalf("answer %d %s; want 400 saying the body timed out after 10 of 100 bytes", resp.StatusCode, body)
	}
}
