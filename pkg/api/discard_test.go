package api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// writeThenRead sends a request the way Python's http.client and requests
// do: headers and the whole body first, then it reads the answer. It
// returns the status line, or the error that stopped it.
func writeThenRead(t *testing.T, base, path string, contentType string, bodyLen int) (string, error) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	w := bufio.NewWriterSize(conn, 64<<10)
	fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: edgegrid\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, contentType, bodyLen)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for left := bodyLen; left > 0; left -= len(chunk) {
		if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
			return "", err
		}
	}
	if err := w.Flush(); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSpace(line), err
}

func TestRefusalsAreReadable(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	path := "/topics/t/events?api-version=2019-01-01-preview"
	t.Run("TooLarge", func(t *testing.T) {
		for i := range 20 {
			line, err := writeThenRead(t, ts.URL, path, "application/json", 12<<20)
			if err != nil || !strings.HasPrefix(line, "HTTP/1.1 413") {
				t.Fatalf("try %d: read %q, %v; want the 413", i+1, line, err)
			}
		}
	})
	t.Run("UnknownTopic", func(t *testing.T) {
		line, err := writeThenRead(t, ts.URL, "/topics/nope/events?api-version=2019-01-01-preview", "application/json", 2<<20)
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 404") {
			t.Fatalf("read %q, %v; want the 404", line, err)
		}
	})
	t.Run("WrongMediaType", func(t *testing.T) {
		line, err := writeThenRead(t, ts.URL, path, "text/plain", 1<<20)
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 415") {
			t.Fatalf("read %q, %v; want the 415", line, err)
		}
	})
}

func TestRefusalsBeyondTheDiscardLimit(t *testing.T) {
	ts := MustOpenServer(t, withAPI(func(o *api.Options) { o.MaxDiscardBytes = 1 << 20 }))
	ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	// A client that reads while it writes gets the 413 and a closed
	// connection, not a hang.
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		fmt.Fprintf(conn, "POST /topics/t/events?api-version=2019-01-01-preview HTTP/1.1\r\nHost: edgegrid\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 64<<20)
		chunk := make([]byte, 64<<10)
		for range 1024 {
			if _, err := conn.Write(chunk); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Errorf("status %d, close %v; want 413 and the connection closed", resp.StatusCode, resp.Close)
	}
}

// TestDiscardMemoryBounded: discarding a 12 MB refused body does not
// buffer it.
func TestDiscardMemoryBounded(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	line, err := writeThenRead(t, ts.URL, "/topics/t/events?api-version=2019-01-01-preview", "application/json", 12<<20)
	runtime.ReadMemStats(&after)
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 413") {
		t.Fatalf("read %q, %v", line, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("discarding 12 MB allocated %d bytes", grew)
	}
}
