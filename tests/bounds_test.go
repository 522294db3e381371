package tests_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawConn is a client connection written and read by hand: what it sends
// and when it reads are the test's, not an HTTP client's.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

// dialFrom connects to base (http://host:port) from the loopback address
// from ("": any).
func dialFrom(t *testing.T, base, from string) (*rawConn, error) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, conn: c, r: bufio.NewReader(c)}, nil
}

func mustDialFrom(t *testing.T, base, from string) *rawConn {
	t.Helper()
	c, err := dialFrom(t, base, from)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// send writes a request with body (its length declared); it reads
// nothing.
func (c *rawConn) send(method, target, body string, header ...string) {
	c.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: broker\r\nContent-Length: %d\r\n", method, target, len(body))
	for i := 0; i+1 < len(header); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", header[i], header[i+1])
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	if _, err := io.WriteString(c.conn, b.String()); err != nil {
		c.t.Fatalf("%s %s: %v", method, target, err)
	}
}

// read reads one answer, within timeout, and its body.
func (c *rawConn) read(timeout time.Duration) (*http.Response, string, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(timeout))
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// mustRead is read that fails the test on an error.
func (c *rawConn) mustRead(what string) (*http.Response, string) {
	c.t.Helper()
	resp, body, err := c.read(10 * time.Second)
	if err != nil {
		c.t.Fatalf("%s: no answer: %v", what, err)
	}
	return resp, body
}

// closed waits until the broker closed the connection (the next read ends
// without an answer) and reports whether it did within timeout.
func (c *rawConn) closed(timeout time.Duration) bool {
	_ = c.conn.SetReadDeadline(time.Now().Add(timeout))
	_, err := io.Copy(io.Discard, c.r)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestInspection_StreamLifetime: a live tail outlives the server's read
// timeout and ends cleanly after one and a half times
// api__requestTimeoutInSeconds, closing its connection; one whose client
// never reads, on a quiet topic, gives its place back within twice the
// timeout; and one client holds at most half of the streams.
func TestInspection_StreamLifetime(t *testing.T) {
	// Serial (see doc.go): a stream's place must come free within 1 s of twice the request timeout.
	const timeout = 4 * time.Second // api__requestTimeoutInSeconds
	s := newInspectScene(t, "api__maxEventStreams", "4", "api__requestTimeoutInSeconds", "4")

	t.Run("Reader", func(t *testing.T) {
		opened := time.Now()
		tail := openStreamFrom(t, s.url("/topics/empty/events"), true, "127.0.0.2")
		if !tail.resp.Close {
			t.Error("a stream's answer does not carry Connection: close")
		}
		eventually(t, 2*timeout, func() error {
			if ended, _ := tail.endedCleanly(); !ended {
				return errors.New("the stream is still open")
			}
			return nil
		})
		lasted := time.Since(opened)
		_, beats, _ := tail.snapshot()
		if _, clean := tail.endedCleanly(); !clean || lasted < timeout || beats < 4 {
			t.Errorf("the stream ended after %v (clean: %v) with %d keep-alive comments; want a clean end after the read timeout (%v), with a comment a second",
				lasted.Round(time.Millisecond), clean, beats, timeout)
		}
		t.Logf("a stream read to its end lasted %v", lasted.Round(time.Millisecond))
	})

	t.Run("NeverReads", func(t *testing.T) {
		// Four streams: two of each client, the most one may hold. The
		// first reads its answer's head, a few bytes at a time so as not
		// to take more, and then nothing.
		opened := time.Now()
		silent := mustDialFrom(t, s.b.URL, "127.0.0.3")
		silent.r = bufio.NewReaderSize(silent.conn, 16)
		silent.send(http.MethodGet, "/topics/empty/events?"+apiVersion, "")
		_ = silent.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if resp, err := http.ReadResponse(silent.r, nil); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("the silent stream: %v %v", resp, err)
		}
		openStreamFrom(t, s.url("/topics/empty/events"), true, "127.0.0.3")
		resp, body := doFrom(t, "127.0.0.3", http.MethodGet, s.url("/topics/empty/events?"+apiVersion))
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !resp.Close ||
			!strings.Contains(body, "One client may hold at most 2 of the 4 event streams (half of api__maxEventStreams)") {
			t.Errorf("a third stream of one client: %d, Retry-After %q, closing %v, %s", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close, body)
		}
		openStreamFrom(t, s.url("/topics/empty/events"), true, "127.0.0.4")
		openStreamFrom(t, s.url("/topics/empty/events"), true, "127.0.0.4")
		// The broker is full; the silent stream's place comes free within
		// twice the request timeout of its opening.
		var got *sseStream
		eventually(t, 2*timeout+time.Second, func() error {
			var code int
			if got, code = dialStreamFrom(t, s.url("/topics/empty/events"), true, "127.0.0.5"); got == nil {
				return fmt.Errorf("a fifth stream: %d", code)
			}
			return nil
		})
		freed := time.Since(opened)
		if freed > 2*timeout+time.Second {
			t.Errorf("a place came free %v after the silent stream opened; want within %v", freed, 2*timeout)
		}
		if !silent.closed(5 * time.Second) {
			t.Error("the connection of the stream nobody read is still open")
		}
		t.Logf("the place of a stream nobody read came free after %v", freed.Round(time.Millisecond))
	})
}

// doFrom sends a request without a body from the loopback address from and
// returns the answer and its body.
func doFrom(t *testing.T, from, method, url string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // should it answer a stream
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := clientFrom(t, from).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestAPI_ConnectionBound: with api__maxConnections 4, a new connection
// takes the place of the one idle the longest, which the broker closes;
// when all four are busy (receives waiting), a new one is answered 503
// TooManyConnections with Connection: close and closed. The 503 of a
// receive beyond broker__maxWaitingReceives closes its connection too.
func TestAPI_ConnectionBound(t *testing.T) {
	// Serial (see doc.go): an answer within 200 ms tells a served request from a waiting one.
	b := queueBroker(t, nil, []string{"q"}, "api__maxConnections", "4", "broker__maxWaitingReceives", "3")
	// admitted dials a connection and sends what send sends on it, again
	// while the broker refuses it for the bound: a connection whose answer
	// was just read may not be idle yet for the broker, and then a new one
	// is refused rather than taking its place. An answer within 200 ms
	// other than that refusal is returned; none means the request waits.
	admitted := func(from string, send func(*rawConn)) (*rawConn, *http.Response, string) {
		for {
			c := mustDialFrom(t, b.URL, from)
			send(c)
			resp, body, err := c.read(200 * time.Millisecond)
			if err != nil {
				return c, nil, "" // it waits
			}
			if !strings.Contains(body, "TooManyConnections") {
				return c, resp, body
			}
		}
	}
	health := func(c *rawConn) { c.send(http.MethodGet, "/healthz", "") }

	// Eight connections one after the other, each idle after its answer:
	// each new one beyond the bound takes the place of the one idle the
	// longest, so the first ones are closed and the last kept.
	var idle []*rawConn
	for range 8 {
		c, resp, body := admitted("", health)
		if resp == nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /healthz: %v %s", resp, body)
		}
		idle = append(idle, c)
	}
	if !idle[0].closed(5 * time.Second) {
		t.Error("the connection idle the longest is still open after four more came")
	}
	if idle[7].closed(100 * time.Millisecond) {
		t.Error("the last connection was closed")
	}

	// Three receives wait, a fourth is refused for the waiting limit and
	// closes its connection. (A connection whose answer was just read may
	// not be idle yet for the broker: then a new one is refused for the
	// bound, and tried again.) Each comes from its own loopback address:
	// one client may hold only half of the waiting receives.
	receive := "/topics/t/eventSubscriptions/q:receive?" + nsAPI + "&maxWaitTime=60"
	var waiting []*rawConn
	for i := range 3 {
		c, resp, body := admitted(fmt.Sprintf("127.0.0.%d", 2+i), func(c *rawConn) { c.send(http.MethodPost, receive, "") })
		if resp != nil {
			t.Fatalf("a receive answered %d %s; want it to wait", resp.StatusCode, body)
		}
		waiting = append(waiting, c)
	}
	eventually(t, 10*time.Second, func() error {
		if v, _ := mustScrape(t, b.URL).value("eventgrid_queue_receives_waiting", "topic", "t", "subscription", "q"); v != 3 {
			return fmt.Errorf("%v receives waiting", v)
		}
		return nil
	})
	eventually(t, 10*time.Second, func() error {
		over := mustDialFrom(t, b.URL, "127.0.0.5")
		over.send(http.MethodPost, receive, "")
		resp, body := over.mustRead("a receive beyond the waiting limit")
		if strings.Contains(body, "TooManyConnections") {
			return errors.New("refused for the bound of connections")
		}
		if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close || !strings.Contains(body, "broker__maxWaitingReceives") {
			t.Fatalf("a receive beyond the waiting limit: %d, closing %v, %s", resp.StatusCode, resp.Close, body)
		}
		if !over.closed(5 * time.Second) {
			t.Error("the connection of a receive refused for the waiting limit is still open")
		}
		return nil
	})

	// Four connections, none idle: three receives waiting and one
	// request being sent. A fifth is refused.
	if _, resp, body := admitted("", func(c *rawConn) {
		_, _ = io.WriteString(c.conn, "POST /topics/t:publish?"+nsAPI+" HTTP/1.1\r\nHost: broker\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 1000\r\n\r\n{")
	}); resp != nil {
		t.Fatalf("a publish half sent answered %d %s", resp.StatusCode, body)
	}
	eventually(t, 10*time.Second, func() error {
		c, err := dialFrom(t, b.URL, "")
		if err != nil {
			return err
		}
		c.send(http.MethodGet, "/healthz", "")
		resp, body, err := c.read(5 * time.Second)
		if err != nil {
			return fmt.Errorf("a connection beyond the bound: %v", err)
		}
		if resp.StatusCode == http.StatusOK {
			c.conn.Close() // so that it is not the idle one the next closes
			return errors.New("served: an idle connection was still there to close")
		}
		var env struct {
			Error struct {
				Code    string
				Details struct{ Code, Message string }
			}
		}
		_ = json.Unmarshal([]byte(body), &env)
		if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close || resp.Header.Get("Retry-After") == "" ||
			env.Error.Code != "ServiceUnavailable" || env.Error.Details.Code != "TooManyConnections" ||
			!strings.Contains(env.Error.Details.Message, "The broker holds its limit of 4 open connections, none of them idle (api__maxConnections)") {
			t.Fatalf("a connection beyond the bound: %d %v %s", resp.StatusCode, resp.Header, body)
		}
		if !c.closed(5 * time.Second) {
			t.Error("the refused connection is still open")
		}
		return nil
	})
	for _, c := range waiting {
		if c.closed(100 * time.Millisecond) {
			t.Error("a waiting receive's connection was closed for a new one")
		}
	}
	if len(b.Logs("connections refused: the API holds its limit of open connections, none of them idle (api__maxConnections)")) == 0 {
		t.Error("the refusal is not logged")
	}
}
