package api

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// DefaultEventStreamHeartbeat is how often an idle event stream gets a
// keep-alive comment (api__eventStreamHeartbeatIntervalInSeconds).
const DefaultEventStreamHeartbeat = 15 * time.Second

// streamRetryAfter is the Retry-After of a stream refused for the limit.
const streamRetryAfter = 10

// topicTail serves GET /topics/{t}/events: the live tail of the events the
// topic accepts (docs/console.md#live-tail).
func (s *Server) topicTail(c echo.Context) error {
	t, err := s.resources.Topic(c.Request().Context(), param(c, "topic"))
	if err != nil {
		return err
	}
	return s.serveStream(c, func() *inspect.Stream { return s.opts.Board.Topic(t.Name).Watch() },
		eventgrid.Errorf(eventgrid.ETopicNotFound, "Topic %q does not exist.", t.Name))
}

// deliveries serves GET /topics/{t}/eventSubscriptions/{s}/deliveries: the
// outcome of every attempt (docs/console.md#delivery-outcomes).
func (s *Server) deliveries(c echo.Context) error {
	sub, err := s.resources.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return err
	}
	return s.serveStream(c, func() *inspect.Stream { return s.opts.Board.Subscription(sub.UID).Watch() },
		eventgrid.Errorf(eventgrid.ESubscriptionMissing, "Event subscription %q does not exist in topic %q.", sub.Name, sub.Topic))
}

// serveStream answers with the stream open returns, as Server-Sent Events,
// until the client goes, the stream ends (its topic or subscription was
// deleted) or the server closes. gone is the answer when open finds
// nothing to stream: what was asked for has just been deleted.
func (s *Server) serveStream(c echo.Context, open func() *inspect.Stream, gone error) error {
	if n := s.streams.Add(1); n > int64(s.opts.MaxEventStreams) {
		s.streams.Add(-1)
		return &retryAfterError{seconds: streamRetryAfter, err: eventgrid.Errorf(eventgrid.ETooManyStreams,
			"At most %d event streams may be open at once (api__maxEventStreams).", s.opts.MaxEventStreams)}
	}
	defer s.streams.Add(-1)
	st := open()
	if st == nil {
		return gone
	}
	defer st.Close()
	w := c.Response()
	rc := http.NewResponseController(w)
	// A stream outlasts the server's read and write timeouts: no read
	// deadline (an expired one would cancel the request), and a write
	// deadline for each write, so that a client that stops reading is
	// cut off rather than holding a goroutine for ever.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if s.writeStream(rc, w, nil) != nil {
		return nil
	}
	beat := time.NewTicker(s.opts.EventStreamHeartbeat)
	defer beat.Stop()
	ctx := c.Request().Context()
	var (
		buf   []byte
		items []inspect.Item
	)
	for {
		ended := false
		select {
		case <-ctx.Done():
			return nil
		case <-s.closing.Done():
			return nil
		case <-beat.C:
			// Items skipped beyond the stream's rate are told at once,
			// not with the next item.
			var dropped int
			items, dropped, ended = st.Take(items[:0])
			buf = append(appendItems(buf[:0], items, dropped), ": keep-alive\n\n"...)
			clear(items)
		case <-st.Ready():
			var dropped int
			items, dropped, ended = st.Take(items[:0])
			buf = appendItems(buf[:0], items, dropped)
			clear(items)
		}
		if s.writeStream(rc, w, buf) != nil || ended {
			return nil
		}
	}
}

// writeStream writes b and flushes it, within the request timeout.
func (s *Server) writeStream(rc *http.ResponseController, w http.ResponseWriter, b []byte) error {
	timeout := s.opts.RequestTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	_ = rc.SetWriteDeadline(time.Now().Add(timeout))
	if len(b) > 0 {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return rc.Flush()
}

// appendItems appends the server-sent events of items to b, after one that
// says how many were dropped, if any were.
func appendItems(b []byte, items []inspect.Item, dropped int) []byte {
	if dropped > 0 {
		b = appendEvent(b, "dropped", append(strconv.AppendInt([]byte(`{"count":`), int64(dropped), 10), '}'))
	}
	for _, it := range items {
		b = appendEvent(b, it.Event, it.Data)
	}
	return b
}

// appendEvent appends one server-sent event: its name, and its data split
// into one data line per line (a line break, in the event stream format, is
// CR LF, LF or CR), so that a reader joins them back with \n.
func appendEvent(b []byte, name string, data []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, '\n')
	for {
		i := lineBreak(data)
		b = append(b, "data: "...)
		if i < 0 {
			b = append(b, data...)
			break
		}
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(b, "\n\n"...)
}

// lineBreak returns the index of the first CR or LF in data, -1 if none:
// two byte searches, which are fast, rather than one search for either
// byte, which goes byte by byte (an event's JSON seldom holds either).
func lineBreak(data []byte) int {
	lf := bytes.IndexByte(data, '\n')
	before := data
	if lf >= 0 {
		before = data[:lf]
	}
	if cr := bytes.IndexByte(before, '\r'); cr >= 0 {
		return cr
	}
	return lf
}
