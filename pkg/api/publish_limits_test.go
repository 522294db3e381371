package api_test

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// customBody returns a CustomEventSchema batch of exactly size bytes made
// of events of at most 512 KiB each.
func customBody(size int) string {
	const overhead = len(`{"p":""}`)
	var b strings.Builder
	b.WriteByte('[')
	left := size - 2 // brackets
	for first := true; left > 0; first = false {
		if !first {
			b.WriteByte(',')
			left--
		}
		n := min(left, 512<<10)
		b.WriteString(`{"p":"` + strings.Repeat("x", n-overhead) + `"}`)
		left -= n
	}
	b.WriteByte(']')
	return b.String()
}

// countingReader yields n bytes of JSON whitespace, counting what was read,
// and hides its length so the request is sent chunked.
type countingReader struct {
	left int64
	read atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.left))
	for i := range n {
		p[i] = ' '
	}
	r.left -= int64(n)
	r.read.Add(int64(n))
	return n, nil
}

func TestPublish_BodyLimits(t *testing.T) {
	limit := int(api.DefaultOptions().MaxContentLength)
	if limit != 1058576 {
		t.Fatalf("default MaxContentLength = %d, want 1058576", limit)
	}
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "c", eventgrid.CustomEventSchema)
	ts.MustPutSubscription(t, "c", "all", webhook(nil))

	t.Run("AtLimit", func(t *testing.T) {
		ts.Recorder.Reset()
		body := customBody(limit)
		if len(body) != limit {
			t.Fatalf("body is %d bytes", len(body))
		}
		mustStatus(t, ts.do(t, http.MethodPost, "/topics/c/events", ctJSON, body), http.StatusOK)
		if n := len(ts.Recorder.Events()); n != 3 {
			t.Errorf("published %d events, want 3", n)
		}
	})
	t.Run("OverLimitWithContentLength", func(t *testing.T) {
		ts.Recorder.Reset()
		r := ts.do(t, http.MethodPost, "/topics/c/events", ctJSON, customBody(limit+1))
		mustErrorContaining(t, r, http.StatusRequestEntityTooLarge, eventgrid.EPayloadTooLarge, "1058576")
		if n := len(ts.Recorder.Calls()); n != 0 {
			t.Errorf("published %d calls", n)
		}
	})
	t.Run("OverLimitChunked", func(t *testing.T) {
		ts.Recorder.Reset()
		src := &countingReader{left: int64(limit) + 1}
		r := ts.do(t, http.MethodPost, "/topics/c/events", ctJSON, struct{ io.Reader }{src})
		mustError(t, r, http.StatusRequestEntityTooLarge, eventgrid.EPayloadTooLarge)
	})
	t.Run("HugeChunkedNotReadWhole", func(t *testing.T) {
		const total = 1 << 30
		src := &countingReader{left: total}
		r := ts.do(t, http.MethodPost, "/topics/c/events", ctJSON, struct{ io.Reader }{src})
		mustError(t, r, http.StatusRequestEntityTooLarge, eventgrid.EPayloadTooLarge)
		// The server stops at the cap; what was sent beyond it sits in
		// socket buffers at most.
		if n := src.read.Load(); n > int64(limit)+64<<20 {
			t.Errorf("the client sent %d bytes before the 413", n)
		}
	})
	t.Run("HugeContentLengthNotRead", func(t *testing.T) {
		const total = 1 << 30
		src := &countingReader{left: total}
		req := brokertest.NewRequest(t, http.MethodPost, ts.url("/topics/c/events", edgeVersion), ctJSON, io.Reader(src))
		req.ContentLength = total
		r := ts.send(t, req)
		mustError(t, r, http.StatusRequestEntityTooLarge, eventgrid.EPayloadTooLarge)
		if n := src.read.Load(); n > 64<<20 {
			t.Errorf("the client sent %d bytes before the 413", n)
		}
	})
	t.Run("EventOverOneMiB", func(t *testing.T) {
		ts.Recorder.Reset()
		ev := `{"p":"` + strings.Repeat("x", eventgrid.MaxEventSize-len(`{"p":""}`)+1) + `"}`
		r := ts.do(t, http.MethodPost, "/topics/c/events", ctJSON, "["+ev+"]")
		mustErrorContaining(t, r, http.StatusRequestEntityTooLarge, eventgrid.EPayloadTooLarge, "index 0")
	})
	t.Run("ManagementBody", func(t *testing.T) {
		r := ts.do(t, http.MethodPut, "/topics/big", ctJSON, `{"x":"`+strings.Repeat("x", limit)+`"}`)
		mustError(t, r, http.StatusRequestEntityTooLarge, eventgrid.EPayloadTooLarge)
	})
}

func TestPublish_ConfiguredLimit(t *testing.T) {
	ts := MustOpenServer(t, withAPI(func(o *api.Options) { o.MaxContentLength = 200 }))
	ts.MustPutTopic(t, "c", eventgrid.CustomEventSchema)
	ts.MustPutSubscription(t, "c", "all", webhook(nil))
	tests := []struct {
		name    string
		size    int
		chunked bool
		status  int
	}{
		{"At", 200, false, http.StatusOK},
		{"AtChunked", 200, true, http.StatusOK},
		{"Over", 201, false, http.StatusRequestEntityTooLarge},
		{"OverChunked", 201, true, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any = customBody(tt.size)
			if tt.chunked {
				body = struct{ io.Reader }{strings.NewReader(customBody(tt.size))}
			}
			r := ts.do(t, http.MethodPost, "/topics/c/events", ctJSON, body)
			if tt.status == http.StatusOK {
				mustStatus(t, r, http.StatusOK)
				return
			}
			mustErrorContaining(t, r, tt.status, eventgrid.EPayloadTooLarge, "200 bytes")
		})
	}
}
