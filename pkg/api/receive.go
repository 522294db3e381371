package api

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/queue"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// DefaultReceiveGrace is how long answers of :receive being written get to
// finish once the broker stops.
const DefaultReceiveGrace = 5 * time.Second

func (s *Server) receive(c echo.Context) error {
	maxEvents, err := intQuery(c, "maxEvents", 1, 1, maxReceiveEvents)
	if err != nil {
		return err
	}
	waitSeconds, err := intQuery(c, "maxWaitTime", 60, 10, 120)
	if err != nil {
		return err
	}
	sub, err := s.queueSubscription(c)
	if err != nil {
		return err
	}
	wait := time.Duration(waitSeconds) * time.Second
	// A long poll outlasts the server's request timeout: this request gets
	// the wait on top of it.
	rc := http.NewResponseController(c.Response())
	deadline := time.Now().Add(wait + s.opts.RequestTimeout)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
	got, err := s.waitingReceive(c.Request().Context(), remoteHost(c.Request()), sub, maxEvents, wait)
	if err != nil {
		if eventgrid.ErrorCode(err) == eventgrid.EUnavailable {
			// Too many receives wait: Retry-After, and the connection
			// closes, so that the clients refused do not hold
			// connections open meanwhile.
			return &retryAfterError{err: err, seconds: s.retryAfterSeconds(), closeConn: true}
		}
		return err
	}
	if len(got) == 0 {
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, []byte(`{"value":[]}`))
	}
	// The answer must be read before the locks expire: a client that reads
	// slower is cut off, and its events come back when their locks expire.
	_ = rc.SetWriteDeadline(got[0].LockedUntil)
	done := s.answers.add(rc)
	defer done()
	if err := writeReceived(c.Response(), got); err != nil {
		s.log.Info().Str("topic", sub.Topic).Str("subscription", sub.Name).Int("events", len(got)).Str("error", err.Error()).
			Msg("a receive answer was cut off before the client read it; its events are received again when their locks expire")
	}
	return nil
}

// waitingReceive is the queue's receive, which ends with no events, and no
// error, once the server closes.
func (s *Server) waitingReceive(ctx context.Context, client string, sub *eventgrid.EventSubscription, maxEvents int, wait time.Duration) ([]queue.Received, error) {
	if limit := s.opts.MaxWaitingReceives; limit > 0 {
		// The store bounds the receives waiting across the broker; one
		// client may have half of them in progress, so that it cannot
		// keep the others out.
		if s.polls.take(client, math.MaxInt, halfOf(limit)) != refuseNone {
			return nil, eventgrid.Errorf(eventgrid.EUnavailable, "One client may have at most %d receives in progress (half of broker__maxWaitingReceives); this client has them already: retry later, or receive with a shorter maxWaitTime.", halfOf(limit))
		}
		defer s.polls.give(client)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.closing, cancel)
	defer stop()
	got, err := s.svc.Queues.Receive(ctx, sub, maxEvents, wait)
	if err != nil && s.closing.Err() != nil && errors.Is(err, context.Canceled) {
		return nil, nil // the broker stops: an empty answer
	}
	return got, err
}

// writeReceived writes the answer of a receive, copying each event's body
// from the queue, which shares it with every receive of the event, through
// a buffer of at most answerChunk bytes and never larger than the answer:
// an answer takes no more memory of its own than that buffer and the
// connection's, however large its events, and the bodies stay counted in
// the queue budget while they are locked. Each envelope is written straight
// into the buffer, its length found beforehand for the Content-Length.
// Gathering the answer's small pieces (an envelope, a body of 1 KiB) into
// large writes takes a few system calls per answer instead of one every
// 4 KiB of the connection's buffer.
func writeReceived(w *echo.Response, got []queue.Received) error {
	const opening = `{"value":[`
	closing := `]}`
	if len(got) > 0 {
		closing = `}]}`
	}
	// The envelopes' lengths, and whether each lock token is written as it
	// is (it always is, made by the store): on the stack for an answer of
	// the most events a receive takes.
	var lensOf [maxReceiveEvents]int32
	var plainOf [maxReceiveEvents]bool
	lens, plain := lensOf[:0], plainOf[:0]
	if len(got) > maxReceiveEvents {
		lens, plain = make([]int32, 0, len(got)), make([]bool, 0, len(got))
	}
	size := len(opening) + len(closing)
	for i, r := range got {
		n, p := envelopeLen(i, r)
		lens, plain = append(lens, int32(n)), append(plain, p)
		size += n + len(r.Body)
	}
	w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	w.Header().Set(echo.HeaderContentLength, strconv.Itoa(size))
	w.WriteHeader(http.StatusOK)
	cw := newChunkWriter(w, size)
	defer cw.free()
	cw.writeString(opening)
	for i, r := range got {
		if n := int(lens[i]); cw.room(n) {
			cw.n += len(appendEnvelope(cw.buf[cw.n:cw.n:cw.n+n], i, r, plain[i]))
		} else {
			cw.write(appendEnvelope(nil, i, r, plain[i])) // larger than the buffer, or after an error
		}
		cw.write(r.Body)
	}
	cw.writeString(closing)
	return cw.flush()
}

// maxReceiveEvents is the most events one receive hands out.
const maxReceiveEvents = 100

// The envelope of a received event, around its lock token and delivery
// count, up to the event's body; the envelope of every event but the first
// starts by closing the one before.
const (
	envelopeNext  = `},`
	envelopeToken = `{"brokerProperties":{"lockToken":`
	envelopeCount = `,"deliveryCount":`
	envelopeEvent = `},"event":`
)

// appendEnvelope appends the envelope of r, the event at index i of an
// answer; plainToken says that its lock token needs no escapes.
func appendEnvelope(dst []byte, i int, r queue.Received, plainToken bool) []byte {
	if i > 0 {
		dst = append(dst, envelopeNext...)
	}
	dst = append(dst, envelopeToken...)
	if plainToken {
		dst = append(dst, '"')
		dst = append(dst, r.LockToken...)
		dst = append(dst, '"')
	} else {
		dst = rawjson.AppendString(dst, r.LockToken)
	}
	dst = append(dst, envelopeCount...)
	dst = strconv.AppendInt(dst, int64(r.DeliveryCount), 10)
	return append(dst, envelopeEvent...)
}

// envelopeLen is the length of r's envelope at index i, and whether its
// lock token needs no escapes.
func envelopeLen(i int, r queue.Received) (n int, plainToken bool) {
	token := rawjson.StringLen(r.LockToken)
	n = len(envelopeToken) + token + len(envelopeCount) + len(envelopeEvent)
	if i > 0 {
		n += len(envelopeNext)
	}
	if r.DeliveryCount < 0 {
		n++
	}
	for c := r.DeliveryCount; ; c /= 10 {
		n++
		if c > -10 && c < 10 {
			return n, token == len(r.LockToken)+2
		}
	}
}

// answerChunk is the size of the writes of a receive answer: an answer of
// 100 events of 1 KiB takes 2 or 3, and a buffer of this size is taken
// from the pool only while an answer is written. A smaller answer gets a
// buffer of its own size, so that many slow readers of small answers (each
// held until its lock expires) cannot hold many times their events' bytes.
const answerChunk = 64 << 10

var answerChunks = sync.Pool{New: func() any { return new([answerChunk]byte) }}

// chunkWriter gathers small writes into writes of answerChunk bytes; a
// piece larger than that goes out on its own, uncopied. Its first error
// sticks.
type chunkWriter struct {
	w      io.Writer
	buf    []byte
	pooled *[answerChunk]byte // buf's array when it came from the pool
	n      int
	err    error
}

// newChunkWriter returns a chunkWriter for an answer of size bytes.
func newChunkWriter(w io.Writer, size int) *chunkWriter {
	if size < answerChunk {
		return &chunkWriter{w: w, buf: make([]byte, size)}
	}
	p := answerChunks.Get().(*[answerChunk]byte)
	return &chunkWriter{w: w, buf: p[:], pooled: p}
}

// room makes room for n more bytes in the buffer, writing what it holds
// if need be, and reports whether they fit: false after an error, or when
// n is larger than the buffer.
func (cw *chunkWriter) room(n int) bool {
	if cw.err == nil && cw.n+n > len(cw.buf) {
		_ = cw.flush()
	}
	return cw.err == nil && cw.n+n <= len(cw.buf)
}

func (cw *chunkWriter) write(p []byte) {
	if cw.err != nil {
		return
	}
	if cw.n+len(p) > len(cw.buf) {
		if cw.flush() != nil {
			return
		}
		if len(p) > len(cw.buf) {
			_, cw.err = cw.w.Write(p)
			return
		}
	}
	cw.n += copy(cw.buf[cw.n:], p)
}

// writeString is write of a string that fits the buffer at once.
func (cw *chunkWriter) writeString(s string) {
	if cw.room(len(s)) {
		cw.n += copy(cw.buf[cw.n:], s)
	}
}

// flush writes what is gathered, and returns the first error.
func (cw *chunkWriter) flush() error {
	if cw.err == nil && cw.n > 0 {
		_, cw.err = cw.w.Write(cw.buf[:cw.n])
	}
	cw.n = 0
	return cw.err
}

// free returns a pooled buffer to the pool.
func (cw *chunkWriter) free() {
	if cw.pooled != nil {
		answerChunks.Put(cw.pooled)
	}
	cw.buf, cw.pooled = nil, nil
}

// answerSet is the receive answers being written, so that a stopping
// broker can cut the ones its clients read too slowly.
type answerSet struct {
	mu      sync.Mutex
	writing map[*http.ResponseController]struct{}
	cut     bool
}

// add notes an answer being written through rc until the returned function
// is called. An answer that starts after cutAll is cut at once.
func (a *answerSet) add(rc *http.ResponseController) (done func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cut {
		_ = rc.SetWriteDeadline(time.Now())
	}
	if a.writing == nil {
		a.writing = map[*http.ResponseController]struct{}{}
	}
	a.writing[rc] = struct{}{}
	return func() {
		a.mu.Lock()
		delete(a.writing, rc)
		a.mu.Unlock()
	}
}

// cutAll ends every answer being written, and every one that starts later:
// their writes fail at once and their connections close.
func (a *answerSet) cutAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cut = true
	for rc := range a.writing {
		_ = rc.SetWriteDeadline(time.Now())
	}
}
