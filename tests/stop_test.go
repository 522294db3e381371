package tests_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStop_AnswersWhatItRead: at SIGTERM, with clients mid-request on
// keep-alive connections, push and pull alike, every request the broker
// has read gets its answer, each answer closes its connection
// (Connection: close, then the broker closes it), a request sent down a
// connection that was idle at the stop gets an answer too (503, or the
// answer it would have had, if it came first), and new connections are
// refused; then the broker exits cleanly. Before, requests sent down
// keep-alive connections as the broker stopped got no answer at all.
func TestStop_AnswersWhatItRead(t *testing.T) {
	t.Parallel()
	b := queueBroker(t, nil, []string{"q"})
	base := b.URL
	const api = "?" + nsAPI
	// A lock token, received on the connection that will acknowledge it.
	publishCE(t, base, bigEvent("locked", 300))
	acker := mustDialFrom(t, base, "")
	acker.send(http.MethodPost, "/topics/t/eventSubscriptions/q:receive"+api+"&maxEvents=1", "")
	_, body := acker.mustRead("the receive of the event to acknowledge")
	var got struct {
		Value []struct {
			BrokerProperties struct{ LockToken string }
		}
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Value) != 1 {
		t.Fatalf("receive: %v %s", err, body)
	}
	token := got.Value[0].BrokerProperties.LockToken

	// Four receives waiting for events.
	var waiting []*rawConn
	for range 4 {
		c := mustDialFrom(t, base, "")
		c.send(http.MethodPost, "/topics/t/eventSubscriptions/q:receive"+api+"&maxWaitTime=60", "")
		waiting = append(waiting, c)
	}
	eventually(t, 10*time.Second, func() error {
		if v, _ := mustScrape(t, base).value("eventgrid_queue_receives_waiting", "topic", "t", "subscription", "q"); v != 4 {
			return fmt.Errorf("%v receives waiting", v)
		}
		return nil
	})
	// A publish and an acknowledgement half sent: their heads are read, the
	// rest of their bodies comes after the stop.
	event := bigEvent("published", 300)
	publisher := mustDialFrom(t, base, "")
	fmt.Fprintf(publisher.conn, "POST /topics/t:publish%s HTTP/1.1\r\nHost: broker\r\nContent-Type: application/cloudevents+json\r\nContent-Length: %d\r\n\r\n%s",
		api, len(event), event[:100])
	ack := `{"lockTokens":["` + token + `"]}`
	fmt.Fprintf(acker.conn, "POST /topics/t/eventSubscriptions/q:acknowledge%s HTTP/1.1\r\nHost: broker\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		api, len(ack), ack[:10])
	// A keep-alive connection idle at the stop.
	idle := mustDialFrom(t, base, "")
	idle.send(http.MethodGet, "/healthz", "")
	if resp, _ := idle.mustRead("GET /healthz"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d", resp.StatusCode)
	}
	// The heads of the half-sent requests are read before the stop: the
	// broker then logs nothing about them, but both wait for their bodies.
	// A request is read once it reaches the handler, which an
	// acknowledgement with a body too short to parse cannot pass unseen:
	// wait until neither answered in 200 ms.
	for _, c := range []*rawConn{publisher, acker} {
		if resp, body, err := c.read(200 * time.Millisecond); err == nil {
			t.Fatalf("a half-sent request answered %d %s", resp.StatusCode, body)
		}
	}

	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	eventually(t, 10*time.Second, func() error {
		if len(b.Logs("stopping: no longer accepting requests")) == 0 {
			return errors.New("not stopping yet")
		}
		return nil
	})
	// The idle connection's next request, sent at once, is answered: 503
	// with Connection: close once the stop has begun (200 if it came
	// first), never dropped.
	idle.send(http.MethodGet, "/healthz", "")
	resp, body, err := idle.read(10 * time.Second)
	if err != nil {
		t.Fatalf("a request on a connection idle at the stop got no answer: %v", err)
	}
	if resp.StatusCode == http.StatusServiceUnavailable && (!resp.Close || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "The broker is stopping")) {
		t.Errorf("a request on a connection idle at the stop: %d, closing %v, Retry-After %q, %s", resp.StatusCode, resp.Close, resp.Header.Get("Retry-After"), body)
	} else if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a request on a connection idle at the stop: %d %s", resp.StatusCode, body)
	}
	t.Logf("a request on a connection idle at the stop: %d %s", resp.StatusCode, strings.TrimSpace(body))
	// The waiting receives answer at once, with no events, and close.
	for i, c := range waiting {
		resp, body := c.mustRead(fmt.Sprint("waiting receive ", i))
		if resp.StatusCode != http.StatusOK || body != `{"value":[]}` || !resp.Close {
			t.Errorf("waiting receive %d: %d, closing %v, %s; want an empty answer closing its connection", i, resp.StatusCode, resp.Close, body)
		}
		if !c.closed(5 * time.Second) {
			t.Errorf("waiting receive %d: its connection is still open after its answer", i)
		}
	}
	// New connections are refused, while the broker still waits for the
	// half-sent requests.
	eventually(t, 10*time.Second, func() error {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 2*time.Second)
		if err == nil {
			c.Close()
			return errors.New("a new connection was accepted")
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("a new connection: %v; want it refused", err)
		}
		return nil
	})
	// The half-sent requests, completed, are answered as they would have
	// been, and close their connections.
	_, _ = io.WriteString(publisher.conn, event[100:])
	if resp, body := publisher.mustRead("the publish sent across the stop"); resp.StatusCode != http.StatusOK || !resp.Close {
		t.Errorf("the publish sent across the stop: %d, closing %v, %s", resp.StatusCode, resp.Close, body)
	}
	_, _ = io.WriteString(acker.conn, ack[10:])
	if resp, body := acker.mustRead("the acknowledgement sent across the stop"); resp.StatusCode != http.StatusOK || !resp.Close ||
		!strings.Contains(body, `"succeededLockTokens":["`+token+`"]`) {
		t.Errorf("the acknowledgement sent across the stop: %d, closing %v, %s", resp.StatusCode, resp.Close, body)
	}
	for name, c := range map[string]*rawConn{"publish": publisher, "acknowledgement": acker, "idle": idle} {
		if !c.closed(5 * time.Second) {
			t.Errorf("the %s connection is still open after its answer", name)
		}
	}
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the broker did not exit after answering what it had read")
	}
	if b.err != nil {
		t.Errorf("the broker exited with %v", b.err)
	}
	if l := b.Logs("stopped before its work was done"); len(l) > 0 {
		t.Errorf("the stop cut work short: %v", l)
	}
}
