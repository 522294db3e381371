package api

import (
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// readTracker is a request body that notes whether it was read to its end,
// so that a refusal can tell whether the client is still sending.
type readTracker struct {
	io.ReadCloser
	read int64
	eof  bool
}

func (b *readTracker) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

const trackerKey = "edgegrid.body"

// trackBody wraps every request body in a readTracker.
func trackBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body != nil && r.Body != http.NoBody {
			t := &readTracker{ReadCloser: r.Body}
			r.Body = t
			// net/http looks at the request's own body type after the
			// handler to close a connection gracefully when the body was
			// left unread; give it back. The error handler runs after this.
			defer func() { r.Body = t.ReadCloser }()
			err := next(c)
			if err != nil {
				// Only the error handler looks for the tracker (see
				// drainRefused): a request that succeeds does without the
				// context's map of values, which its first value makes.
				c.Set(trackerKey, t)
			}
			return err
		}
		return next(c)
	}
}

// drainRefused makes a refusal readable
// (docs/design.md#requests-that-are-too-large). A client that writes its
// whole body before reading the answer, as Python's http.client and requests
// do, gets a connection reset instead of the status when the server closes
// with the body unread. So before an error answer the rest of the body is
// read and discarded, up to MaxDiscardBytes and within the request's read
// timeout, and the connection is closed after the answer. A body declared
// larger than that is not read at all; neither is one the client has not
// started sending because it waits for 100 Continue.
func (s *Server) drainRefused(c echo.Context) {
	t, ok := c.Get(trackerKey).(*readTracker)
	if !ok || t.eof {
		return
	}
	r := c.Request()
	c.Response().Header().Set(echo.HeaderConnection, "close")
	if t.read == 0 && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	limit := s.opts.MaxDiscardBytes
	if r.ContentLength > 0 && r.ContentLength-t.read > limit {
		return
	}
	// Read the tracker's own body: a MaxBytesReader around it has stopped.
	_, _ = io.CopyN(io.Discard, t.ReadCloser, limit)
}
