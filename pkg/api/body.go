package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// readBody reads the request body, refusing with 413 one whose declared or
// actual length exceeds the cap without reading more than cap+1 bytes. The
// body counts against the budget of bodies being read only while it is
// read: a management request's body is small and short-lived.
func (s *Server) readBody(c echo.Context) ([]byte, error) {
	body, release, err := s.readBodyChunked(c, nil)
	if err != nil {
		return nil, err
	}
	out := body
	release()
	return out, nil
}

// bodyPool holds publish request buffers: decoding copies what it keeps, so
// a buffer can serve the next request as soon as the events are queued.
var bodyPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody is the largest buffer kept for reuse, above the largest
// body the default api__maxContentLengthInBytes allows, so that a steady
// stream of large publish requests reads into the same few buffers instead
// of making garbage of a grown copy each. What the pool holds is bounded by
// the bodies read at once, which api__maxBodyBytesInFlight caps, and the
// runtime empties the pool over two collections once the burst is over.
const maxPooledBody = 2 << 20

// bodyChunk is the first allocation for a body and the least growth step:
// memory follows the bytes that arrived, never the declared length.
const bodyChunk = 16 << 10

// readPooledBody is readBody into a pooled buffer; call release once
// nothing refers to the body any more.
func (s *Server) readPooledBody(c echo.Context) (body []byte, release func(), err error) {
	bp := bodyPool.Get().(*[]byte)
	return s.readBodyChunked(c, bp)
}

// readBodyChunked reads the body into *bp (a new buffer when bp is nil),
// growing it as bytes arrive. Every byte of buffer counts against
// Options.MaxBodyBytesInFlight until release; a body that would take the
// budget past it is refused with 503 and Retry-After.
func (s *Server) readBodyChunked(c echo.Context, bp *[]byte) (body []byte, release func(), err error) {
	var buf []byte
	if bp != nil {
		buf = (*bp)[:0]
	}
	var charged int64
	release = func() {
		s.bodies.give(charged)
		charged = 0
		if bp != nil {
			if cap(buf) <= maxPooledBody {
				*bp = buf[:0]
			} else {
				*bp = nil
			}
			bodyPool.Put(bp)
			bp = nil
		}
		buf = nil
	}
	if buf != nil {
		if !s.bodies.take(int64(cap(buf))) {
			buf = nil // leave the pooled buffer for a request with budget
			*bp = (*bp)[:0]
		} else {
			charged = int64(cap(buf))
		}
	}
	buf, err = s.readInto(c, buf, &charged)
	if err != nil {
		release()
		return nil, nil, err
	}
	return buf, release, nil
}

// readInto appends the request body to buf, growing it in steps that
// follow what arrived and charging each growth to the body budget.
func (s *Server) readInto(c echo.Context, buf []byte, charged *int64) ([]byte, error) {
	r := c.Request()
	limit := s.opts.MaxContentLength
	declared := r.ContentLength
	if declared > limit {
		return buf, tooLarge(limit)
	}
	if declared == 0 || r.Body == nil || r.Body == http.NoBody {
		return buf, nil
	}
	r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
	for {
		if declared > 0 && int64(len(buf)) == declared {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			want := int64(max(2*cap(buf), bodyChunk))
			if declared > 0 {
				want = min(want, declared)
			} else {
				want = min(want, limit+1)
			}
			grow := want - int64(cap(buf))
			if !s.bodies.take(grow) {
				return buf, s.bodiesBusy()
			}
			*charged += grow
			nb := make([]byte, len(buf), want)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, s.readError(err, declared, int64(len(buf)))
		}
	}
}

// readError explains why a body could not be read.
func (s *Server) readError(err error, declared, got int64) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return tooLarge(s.opts.MaxContentLength)
	case errors.Is(err, os.ErrDeadlineExceeded):
		sent := fmt.Sprintf("%d bytes", got)
		if declared > 0 {
			sent = fmt.Sprintf("%d of its %d bytes", got, declared)
		}
		return eventgrid.Errorf(eventgrid.EBadRequest, "The request body timed out: the client sent %s within the request timeout of %v (api__requestTimeoutInSeconds).", sent, s.opts.RequestTimeout)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return eventgrid.Errorf(eventgrid.EBadRequest, "The request body ended before its declared length.")
	}
	return eventgrid.Errorf(eventgrid.EBadRequest, "The request body could not be read.")
}

// bodiesBusy is the refusal of a body that would take the memory held by
// request bodies being read past its budget.
func (s *Server) bodiesBusy() error {
	return s.queueFull(eventgrid.Refuse(eventgrid.RefusedBodiesInFlight, eventgrid.EUnavailable,
		"The broker is reading its limit of request bodies (api__maxBodyBytesInFlight %d bytes); retry later.", s.opts.MaxBodyBytesInFlight))
}

// bytesInFlight counts bytes against a limit; a limit of 0 or less never refuses.
type bytesInFlight struct {
	limit int64
	used  atomic.Int64
}

func (b *bytesInFlight) take(n int64) bool {
	if n <= 0 {
		return true
	}
	if b.used.Add(n) > b.limit && b.limit > 0 {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *bytesInFlight) give(n int64) {
	if n > 0 {
		b.used.Add(-n)
	}
}

func tooLarge(limit int64) error {
	return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request body exceeds the limit of %d bytes.", limit)
}

// mediaType returns the lower-cased media type of the request and checks
// that any charset parameter is UTF-8. It returns "" when there is no
// Content-Type header.
func mediaType(c echo.Context) (string, error) {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	switch ct {
	// The media types publishers send, as mime.ParseMediaType would read
	// them, without building its map of parameters.
	case mediaJSON, mediaCloudEvent, mediaCloudEvents:
		return ct, nil
	case mediaJSON + "; charset=utf-8":
		return mediaJSON, nil
	case mediaCloudEvent + "; charset=utf-8":
		return mediaCloudEvent, nil
	case mediaCloudEvents + "; charset=utf-8":
		return mediaCloudEvents, nil
	}
	if strings.TrimSpace(ct) == "" {
		return "", nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", eventgrid.Errorf(eventgrid.EUnsupportedMedia, "Content-Type %q is not a valid media type.", ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return "", eventgrid.Errorf(eventgrid.EUnsupportedMedia, "charset %q is not supported; use utf-8.", cs)
	}
	return mt, nil
}

// isJSONMediaType reports whether mt is application/json or a +json type.
func isJSONMediaType(mt string) bool {
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// readResourceBody is readManagementBody for the original module's topic
// and event subscription PUTs, whose bodies are read as it read them: a
// body that is JSON but for commas after a last member or element, which
// Json.NET accepted and the module's documentation has
// (docs/design.md#the-original-modules-examples), is read without them.
// Any other body is returned as it is, for the decoder to accept or to
// refuse with its line and column.
func (s *Server) readResourceBody(c echo.Context) ([]byte, error) {
	body, err := s.readManagementBody(c)
	if err != nil || rawjson.Valid(body) {
		return body, err
	}
	if fixed, ok := rawjson.WithoutTrailingCommas(body); ok && rawjson.Valid(fixed) {
		return fixed, nil
	}
	return body, nil
}

// readManagementBody reads the JSON body of a management request. A missing
// Content-Type is accepted; a non-JSON one is not.
func (s *Server) readManagementBody(c echo.Context) ([]byte, error) {
	mt, err := mediaType(c)
	if err != nil {
		return nil, err
	}
	if mt != "" && !isJSONMediaType(mt) {
		return nil, eventgrid.Errorf(eventgrid.EUnsupportedMedia, "Content-Type %q is not supported; send application/json.", mt)
	}
	return s.readBody(c)
}
