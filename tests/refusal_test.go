package tests_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestRefusal_OversizedPublishIsRead sends oversized publishes the way
// Python's http.client and requests do, whole body first and only then
// reading, to the real broker: every one reads the 413.
func TestRefusal_OversizedPublishIsRead(t *testing.T) {
	t.Parallel()
	b := startBroker(t, devEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	addr := strings.TrimPrefix(b.URL, "http://")
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	const size = 12 << 20 // more than loopback socket buffers hold
	for i := range 20 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		w := bufio.NewWriterSize(conn, 64<<10)
		fmt.Fprintf(w, "POST /topics/t/events?%s HTTP/1.1\r\nHost: edgegrid\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", apiVersion, size)
		for left := size; left > 0 && err == nil; left -= len(chunk) {
			_, err = w.Write(chunk)
		}
		if err == nil {
			err = w.Flush()
		}
		var line string
		if err == nil {
			line, err = bufio.NewReader(conn).ReadString('\n')
		}
		conn.Close()
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 413") {
			t.Fatalf("try %d of 20: read %q, %v; want 413", i+1, line, err)
		}
	}
}
