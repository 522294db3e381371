package api_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/api"
)

// rawStatus sends a GET whose request line and header block together are
// exactly size bytes and returns the status the server answered.
func rawStatus(t *testing.T, addr string, size int) int {
	t.Helper()
	head := "GET /topics?api-version=" + edgeVersion + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: "
	tail := "\r\n\r\n"
	pad := size - len(head) - len(tail)
	if pad < 1 {
		t.Fatalf("size %d is too small for the request", size)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(head + strings.Repeat("a", pad) + tail)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer to %d bytes of headers: %v", size, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The configured header cap is the real one: a request line and headers of
// exactly MaxHeaderBytes pass, one byte more gets 431.
func TestMaxHeaderBytes_IsTheRealCap(t *testing.T) {
	for _, limit := range []int{api.DefaultOptions().MaxHeaderBytes, 8192, 4097 + 100} {
		ts := MustOpenServer(t, withAPI(func(o *api.Options) { o.MaxHeaderBytes = limit }))
		addr := strings.TrimPrefix(ts.URL, "http://")
		for _, tt := range []struct {
			size, want int
		}{
			{limit - 1, http.StatusOK},
			{limit, http.StatusOK},
			{limit + 1, http.StatusRequestHeaderFieldsTooLarge},
			{limit + 4096, http.StatusRequestHeaderFieldsTooLarge},
		} {
			if got := rawStatus(t, addr, tt.size); got != tt.want {
				t.Errorf("cap %d, %d bytes of request line and headers: %d, want %d", limit, tt.size, got, tt.want)
			}
		}
	}
}

func TestMaxHeaderBytes_DefaultIsDocumented16KiB(t *testing.T) {
	if got := api.DefaultOptions().MaxHeaderBytes; got != 16<<10 {
		t.Errorf("default MaxHeaderBytes = %d, want 16384 (16 KiB)", got)
	}
}
