package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// writeChunk is the most written to a connection at once: a body up to
// this size goes in one write with the header. net/http writes the header
// and a body it knows to be in memory in one piece too, and in two writes,
// so two packets to read, otherwise.
const writeChunk = 16 << 10

// conn is one connection.
type conn struct {
	nc     net.Conn
	h      *host
	lim    limitedReader // between br and nc
	br     *bufio.Reader
	wbuf   []byte
	idleAt time.Time
}

func newConn(nc net.Conn, h *host) *conn {
	c := &conn{nc: nc, h: h}
	c.lim.c = nc
	c.br = bufio.NewReaderSize(&c.lim, 4<<10)
	return c
}

// limitedReader reads from c until left runs out.
type limitedReader struct {
	c    net.Conn
	left int64
}

func (r *limitedReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, errHeaderTooLong
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.c.Read(p)
	r.left -= int64(n)
	return n, err
}

// aLongTimeAgo is a deadline that has passed: it ends a connection's
// reads and writes at once.
var aLongTimeAgo = time.Unix(1, 0)

// exchange sends the request on c and reads its answer, within ctx: its
// deadline is the connection's, and its end ends the connection's reads
// and writes at once. reuse says that c can carry another request.
func (c *conn) exchange(ctx context.Context, t *Target, h http.Header, body [][]byte) (resp *http.Response, reuse bool, err error) {
	deadline, _ := ctx.Deadline()
	if err := c.nc.SetDeadline(deadline); err != nil {
		return nil, false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(aLongTimeAgo) })
	if err = ctx.Err(); err == nil { // else it ended while the connection was got
		resp, reuse, err = c.roundTrip(t, h, body)
	} else {
		err = os.ErrDeadlineExceeded
	}
	if !stop() {
		reuse = false // the deadline is past: the connection cannot be used again
	}
	return resp, reuse, err
}

// postRequest is what http.ReadResponse is told of the request an answer
// is for: a POST.
var postRequest = &http.Request{Method: http.MethodPost}

// roundTrip writes the request and reads its answer; reuse says that the
// connection can carry another request.
func (c *conn) roundTrip(t *Target, h http.Header, body [][]byte) (resp *http.Response, reuse bool, err error) {
	if err := c.write(t, h, body); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, false, err
		}
		// The endpoint may have answered before it stopped reading (a 413
		// for a body too large, say) and closed the connection: its
		// answer is worth more than the write's error.
		c.lim.left = MaxHeaderBytes
		if resp, rerr := http.ReadResponse(c.br, postRequest); rerr == nil && resp.StatusCode >= 200 {
			resp.Body = http.NoBody
			return resp, false, nil
		}
		return nil, false, err
	}
	// The 1xx answers count against the bound with the final one, as with
	// the Transport.
	c.lim.left = MaxHeaderBytes
	for {
		resp, err = http.ReadResponse(c.br, postRequest)
		if err != nil {
			return nil, false, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode < 100 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		// 1xx: informational; the answer follows.
	}
	c.lim.left = math.MaxInt64
	reuse = !resp.Close
	switch {
	case resp.StatusCode == http.StatusSwitchingProtocols:
		// The connection is no longer HTTP's: the Transport hands it to
		// the caller with the answer, here it is closed unread.
		reuse = false
	case resp.Body != http.NoBody:
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain+1))
		if err != nil || n > maxDrain {
			// Not read to its end: the connection goes with it. The
			// status stands, as it did when the body was read by
			// CheckResponse.
			reuse = false
		}
	}
	resp.Body = http.NoBody
	// Bytes past the answer answer nothing (a body sent with a 204, say):
	// the Transport closes a connection that has them, and so is it here.
	reuse = reuse && c.br.Buffered() == 0
	return resp, reuse, nil
}

// write writes the request: its header, then its body, in writes of at
// most writeChunk bytes beyond the header.
func (c *conn) write(t *Target, h http.Header, body [][]byte) error {
	var size int
	for _, p := range body {
		size += len(p)
	}
	buf := appendHeader(c.wbuf[:0], t, h, size)
	var big *[]byte
	if n := len(buf) + size; n > cap(buf) {
		if n <= keptBuffer {
			buf = slices.Grow(buf, n-len(buf))
		} else {
			// Written in chunks of writeChunk, from a buffer only this
			// request holds.
			big = bigBuffers.Get().(*[]byte)
			buf = append((*big)[:0], buf...)
		}
	}
	buf, err := c.writeBody(buf, body)
	if err == nil {
		_, err = c.nc.Write(buf)
	}
	if big != nil {
		if cap(buf) == cap(*big) {
			*big = buf[:0]
			bigBuffers.Put(big)
		}
	} else if cap(buf) <= keptBuffer {
		c.wbuf = buf[:0]
	} else {
		c.wbuf = nil // a header of its own size: not kept
	}
	return err
}

// appendHeader appends the request line and header of a POST of size
// bytes to t with the header h, as the Transport writes them.
func appendHeader(buf []byte, t *Target, h http.Header, size int) []byte {
	buf = append(buf, "POST "...)
	buf = append(buf, t.URI...)
	buf = append(buf, " HTTP/1.1\r\nHost: "...)
	buf = append(buf, t.Host...)
	buf = append(buf, "\r\n"...)
	agent := false
	for k, vs := range h {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue // the Transport writes its own, or none
		case "User-Agent":
			agent = true
		}
		for _, v := range vs {
			buf = append(buf, k...)
			buf = append(buf, ": "...)
			buf = append(buf, textproto.TrimString(v)...)
			buf = append(buf, "\r\n"...)
		}
	}
	if !agent {
		buf = append(buf, "User-Agent: Go-http-client/1.1\r\n"...)
	}
	buf = append(buf, "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(size), 10)
	return append(buf, "\r\n\r\n"...)
}

// writeBody appends body to buf, writing buf out whenever it holds
// writeChunk bytes, and returns what is left to write.
func (c *conn) writeBody(buf []byte, body [][]byte) ([]byte, error) {
	for _, p := range body {
		for len(p) > 0 {
			if len(buf) >= writeChunk {
				if _, err := c.nc.Write(buf); err != nil {
					return buf, err
				}
				buf = buf[:0]
			}
			k := min(len(p), writeChunk-len(buf))
			buf = append(buf, p[:k]...)
			p = p[k:]
		}
	}
	return buf, nil
}

// keptBuffer is the largest request a connection keeps a buffer for: its
// header and a body of a few events. Larger requests take one of
// bigBuffers while they are written, so that an idle connection holds no
// more than this.
const keptBuffer = 4 << 10

// bigBuffers are the buffers of requests larger than keptBuffer: room for
// a header of up to 4 KiB and a chunk of writeChunk, after which the
// buffer is written out and filled again.
var bigBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, writeChunk+4<<10)
	return &b
}}
