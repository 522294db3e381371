package tests_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// sseEvent is one server-sent event: its name and its data lines joined
// with \n.
type sseEvent struct {
	name, data string
	id         string // the event's id line, if any
}

// sseStream reads an event stream of the broker, as a browser would: the
// events in order, the comments counted.
type sseStream struct {
	t    *testing.T
	resp *http.Response

	mu       sync.Mutex
	events   []sseEvent
	comments int
	ended    bool
	err      error // why the reading stopped, nil at the end of the answer
}

// openStream opens the event stream at url (with the API version) and
// fails the test unless the broker answers 200 text/event-stream. The
// stream is read in the background from then on; a stream opened with
// read false is read once resume is called.
func openStream(t *testing.T, url string, read bool) *sseStream {
	t.Helper()
	s, code := dialStream(t, url, read)
	if s == nil {
		t.Fatalf("GET %s = %d", url, code)
	}
	return s
}

// openStreamFrom is openStream from the loopback address from (such as
// 127.0.0.2): to the broker, another client.
func openStreamFrom(t *testing.T, url string, read bool, from string) *sseStream {
	t.Helper()
	s, code := dialStreamFrom(t, url, read, from)
	if s == nil {
		t.Fatalf("GET %s from %s = %d", url, from, code)
	}
	return s
}

// dialStream is openStream that returns the status instead of failing when
// the broker refuses the stream.
func dialStream(t *testing.T, url string, read bool) (*sseStream, int) {
	t.Helper()
	return dialStreamFrom(t, url, read, "")
}

// clientFrom returns an HTTP client whose connections come from the
// loopback address from; "" is http.DefaultClient.
func clientFrom(t *testing.T, from string) *http.Client {
	if from == "" {
		return http.DefaultClient
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// dialStreamFrom is dialStream from the loopback address from ("": any).
func dialStreamFrom(t *testing.T, url string, read bool, from string) (*sseStream, int) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"?"+apiVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := clientFrom(t, from).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, resp.StatusCode
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-store" ||
		resp.Header.Get("X-Accel-Buffering") != "no" {
		resp.Body.Close()
		t.Fatalf("GET %s: headers %v", url, resp.Header)
	}
	s := &sseStream{t: t, resp: resp}
	t.Cleanup(func() { resp.Body.Close() })
	if read {
		s.resume()
	}
	return s, resp.StatusCode
}

// resume starts reading the stream.
func (s *sseStream) resume() {
	go func() {
		sc := bufio.NewScanner(s.resp.Body)
		sc.Buffer(make([]byte, 1<<20), 2<<20)
		var name, id string
		var data []string
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			switch {
			case line == "":
				if data != nil {
					s.events = append(s.events, sseEvent{name, strings.Join(data, "\n"), id})
				}
				name, id, data = "", "", nil
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, ":"):
				s.comments++
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.ended, s.err = true, sc.Err()
		s.mu.Unlock()
	}()
}

// endedCleanly reports whether the stream has ended, and whether it ended
// as an answer does, rather than cut off.
func (s *sseStream) endedCleanly() (ended, clean bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended, s.ended && s.err == nil
}

// snapshot returns the events read so far, the comments, and whether the
// stream has ended.
func (s *sseStream) snapshot() ([]sseEvent, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sseEvent(nil), s.events...), s.comments, s.ended
}

// named returns the data of the events read so far named name.
func (s *sseStream) named(name string) []string {
	evs, _, _ := s.snapshot()
	var out []string
	for _, e := range evs {
		if e.name == name {
			out = append(out, e.data)
		}
	}
	return out
}

// waitNamed waits until the stream has carried n events named name and
// returns their data.
func (s *sseStream) waitNamed(name string, n int, timeout time.Duration) []string {
	s.t.Helper()
	var got []string
	eventually(s.t, timeout, func() error {
		if got = s.named(name); len(got) < n {
			return fmt.Errorf("%d %q events of %d", len(got), name, n)
		}
		return nil
	})
	return got
}

// waitEnded waits until the broker ended the stream.
func (s *sseStream) waitEnded(timeout time.Duration) {
	s.t.Helper()
	eventually(s.t, timeout, func() error {
		if _, _, ended := s.snapshot(); !ended {
			return fmt.Errorf("the stream is still open")
		}
		return nil
	})
}
