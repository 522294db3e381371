package api

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// readBody reads the request body, refusing with 413 one whose declared or
// actual length exceeds the cap without reading more than cap+1 bytes.
func (s *Server) readBody(c echo.Context) ([]byte, error) {
	var buf bytes.Buffer
	return s.readBodyInto(c, &buf)
}

// bodyPool holds publish request buffers: decoding copies what it keeps, so
// a buffer can serve the next request as soon as the events are queued.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest buffer kept for reuse.
const maxPooledBody = 2 << 20

// readPooledBody is readBody into a pooled buffer; call release once
// nothing refers to the body any more.
func (s *Server) readPooledBody(c echo.Context) (body []byte, release func(), err error) {
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	release = func() {
		if buf.Cap() <= maxPooledBody {
			bodyPool.Put(buf)
		}
	}
	body, err = s.readBodyInto(c, buf)
	if err != nil {
		release()
		return nil, nil, err
	}
	return body, release, nil
}

func (s *Server) readBodyInto(c echo.Context, buf *bytes.Buffer) ([]byte, error) {
	r := c.Request()
	limit := s.opts.MaxContentLength
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
	if _, err := buf.ReadFrom(r.Body); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, eventgrid.Errorf(eventgrid.EBadRequest, "The request body ended before its declared length.")
		}
		return nil, eventgrid.Errorf(eventgrid.EBadRequest, "The request body could not be read.")
	}
	return buf.Bytes(), nil
}

func tooLarge(limit int64) error {
	return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request body exceeds the limit of %d bytes.", limit)
}

// mediaType returns the lower-cased media type of the request and checks
// that any charset parameter is UTF-8. It returns "" when there is no
// Content-Type header.
func mediaType(c echo.Context) (string, error) {
	ct := c.Request().Header.Get(echo.HeaderContentType)
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
