package api

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
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
	return s.serveStream(c, func() *inspect.Stream { return s.svc.Board.Topic(t.Name).Watch() },
		eventgrid.Errorf(eventgrid.ETopicNotFound, "Topic %q does not exist.", t.Name))
}

// deliveries serves GET /topics/{t}/eventSubscriptions/{s}/deliveries: the
// outcome of every attempt (docs/console.md#delivery-outcomes).
func (s *Server) deliveries(c echo.Context) error {
	sub, err := s.resources.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return err
	}
	return s.serveStream(c, func() *inspect.Stream { return s.svc.Board.Subscription(sub.UID).Watch() },
		eventgrid.Errorf(eventgrid.ESubscriptionMissing, "Event subscription %q does not exist in topic %q.", sub.Name, sub.Topic))
}

// shareSet counts what clients hold open (event streams, long polls),
// across the broker and by client (the host of the connection's remote
// address), so that one client holds at most half of a limit.
type shareSet struct {
	mu       sync.Mutex
	open     int
	byClient map[string]int
}

// refusal says which bound a take would pass: none, the broker's, or the
// client's share.
type refusal uint8

const (
	refuseNone refusal = iota
	refuseAll
	refuseShare
)

// take counts one more for client, within limit across the broker and
// share for one client; it counts nothing and says which bound it would
// pass otherwise.
func (ss *shareSet) take(client string, limit, share int) refusal {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.open >= limit:
		return refuseAll
	case ss.byClient[client] >= share:
		return refuseShare
	}
	if ss.byClient == nil {
		ss.byClient = map[string]int{}
	}
	ss.open++
	ss.byClient[client]++
	return refuseNone
}

// give counts one less for client.
func (ss *shareSet) give(client string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.open--
	if ss.byClient[client]--; ss.byClient[client] <= 0 {
		delete(ss.byClient, client)
	}
}

// takeStream opens an event stream for client, or returns the refusal,
// naming the bound it would pass.
func (s *Server) takeStream(client string) error {
	limit := s.opts.MaxEventStreams
	switch s.streams.take(client, limit, halfOf(limit)) {
	case refuseAll:
		return &retryAfterError{seconds: streamRetryAfter, closeConn: true, err: eventgrid.Errorf(eventgrid.ETooManyStreams,
			"At most %d event streams may be open at once (api__maxEventStreams).", limit)}
	case refuseShare:
		return &retryAfterError{seconds: streamRetryAfter, closeConn: true, err: eventgrid.Errorf(eventgrid.ETooManyStreams,
			"One client may hold at most %d of the %d event streams (half of api__maxEventStreams); this client holds them already.", halfOf(limit), limit)}
	}
	return nil
}

// halfOf is a client's share of limit: half, at least one.
func halfOf(limit int) int { return max(limit/2, 1) }

// serveStream answers with the stream open returns, as Server-Sent Events,
// until the client goes, the stream ends (its topic or subscription was
// deleted), the server closes, or the stream has lasted one and a half
// times the request timeout. gone is the answer when open finds nothing
// to stream: what was asked for has just been deleted.
//
// Whether a client reads a stream cannot be told while what is written
// fits the connection's buffers, as heartbeats on a quiet topic do for
// hours: so every stream ends, cleanly, after 1.5 × the request timeout,
// and one whose last writes the client does not take is cut at twice the
// timeout. A reader reconnects (the console does); one that reads nothing
// gives its place back in time (docs/console.md#live-tail).
func (s *Server) serveStream(c echo.Context, open func() *inspect.Stream, gone error) error {
	client := remoteHost(c.Request())
	if err := s.takeStream(client); err != nil {
		return err
	}
	defer s.streams.give(client)
	st := open()
	if st == nil {
		return gone
	}
	defer st.Close()
	timeout := s.streamTimeout()
	end := time.NewTimer(timeout * 3 / 2)
	defer end.Stop()
	cut := time.Now().Add(2 * timeout)
	w := c.Response()
	rc := http.NewResponseController(w)
	startStream(rc, w)
	if s.writeStream(rc, w, nil, cut) != nil {
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
		case <-end.C:
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
		if s.writeStream(rc, w, buf, cut) != nil || ended {
			return nil
		}
	}
}

// startStream writes an event stream's status and header. A stream
// outlasts the server's read and write timeouts: no read deadline (an
// expired one would cancel the request), and a write deadline for each
// write, at most the stream's cut, so that a client that stops reading is
// cut off rather than holding a goroutine and a stream's place.
func startStream(rc *http.ResponseController, w *echo.Response) {
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-store")
	h.Set("X-Accel-Buffering", "no")
	// The connection ends with the stream: a reader reconnects, and one
	// that reads nothing keeps no idle connection.
	h.Set(echo.HeaderConnection, "close")
	w.WriteHeader(http.StatusOK)
}

// streamTimeout is the request timeout that bounds an event stream's
// writes and its life.
func (s *Server) streamTimeout() time.Duration {
	if s.opts.RequestTimeout <= 0 {
		return 30 * time.Second
	}
	return s.opts.RequestTimeout
}

// writeStream writes b and flushes it, within the request timeout and
// before cut.
func (s *Server) writeStream(rc *http.ResponseController, w http.ResponseWriter, b []byte, cut time.Time) error {
	deadline := time.Now().Add(s.streamTimeout())
	if deadline.After(cut) {
		deadline = cut
	}
	_ = rc.SetWriteDeadline(deadline)
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
		if it.ID != "" {
			b = append(append(append(b, "id: "...), it.ID...), '\n')
		}
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
