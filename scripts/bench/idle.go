package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// idleClients is how many clients scenario k opens, in each of its two
// phases; idleDialers how many connect at once.
const (
	idleClients = 5000
	idleDialers = 200
)

// idlePhase is what one phase of scenario k saw.
type idlePhase struct {
	Clients        int   `json:"clients"`
	ConnectFailed  int64 `json:"connect_failed"`
	Answered200    int64 `json:"answered_200"`
	Answered503    int64 `json:"answered_503"`
	RefusedForConn int64 `json:"answered_503_too_many_connections"`
	NoAnswer       int64 `json:"no_answer"`        // still waiting (a long poll) when measured
	ClosedByBroker int64 `json:"closed_by_broker"` // of those the client holds, the connections the broker closed
	SocketsHeld    int   `json:"broker_sockets_held"`
	RSS            int64 `json:"broker_rss_bytes"`
	IdleRSS        int64 `json:"broker_idle_rss_bytes"`
}

// scenarioK opens 5,000 client connections to a broker, twice: each sends
// one request and then holds its connection without closing it, idle
// after a GET /healthz in the first phase, waiting on a long poll
// (:receive with maxWaitTime=60 on a queue subscription that holds
// nothing) in the second. Once every client has its answer or waits, it
// counts the sockets the broker holds (its open file descriptors that are
// sockets, beyond those it held before) and its RSS. With
// api__maxConnections the broker holds at most that many, whatever the
// clients do.
func (s *settings) scenarioK() (r result, err error) {
	r = result{Scenario: "k", Title: fmt.Sprintf("%d idle clients: keep-alive connections, then long polls", idleClients)}
	phases := map[string]idlePhase{}
	limit := 0
	for _, phase := range []string{"keepalive", "longpoll"} {
		p, lim, err := s.idlePhase(&r, phase)
		if err != nil {
			return r, fmt.Errorf("%s: %w", phase, err)
		}
		limit = lim
		phases[phase] = p
		r.RSS = max(r.RSS, p.RSS)
		r.note("%s: %d clients; the broker held %d sockets and %.1f MB RSS (%.1f MB idle); %d answered 200, %d 503 (%d of them for the bound of connections), %d no answer yet; %d connections closed by the broker, %d failed to connect",
			phase, p.Clients, p.SocketsHeld, float64(p.RSS)/mb, float64(p.IdleRSS)/mb, p.Answered200, p.Answered503, p.RefusedForConn,
			p.NoAnswer, p.ClosedByBroker, p.ConnectFailed)
	}
	r.PeakRSS = r.RSS
	r.detail("phases", phases)
	r.detail("max_connections", limit)
	held := max(phases["keepalive"].SocketsHeld, phases["longpoll"].SocketsHeld)
	r.judge(fmt.Sprintf("the broker holds at most api__maxConnections (%d) sockets", limit), limit > 0 && held <= limit)
	return r, nil
}

// idlePhase runs one phase of scenario k on a broker of its own and
// returns what it saw, and the broker's api__maxConnections (0 if it
// does not log it).
func (s *settings) idlePhase(r *result, phase string) (p idlePhase, limit int, err error) {
	b, err := s.startBroker(r, map[string]string{"api__requestTimeoutInSeconds": "30"})
	if err != nil {
		return p, 0, err
	}
	defer stopBroker(r, b)
	limit = b.configInt("api__maxConnections")
	mgmt := &http.Client{Timeout: 10 * time.Second}
	request := "GET /healthz HTTP/1.1\r\nHost: broker\r\n\r\n"
	if phase == "longpoll" {
		if err := b.createTopic(mgmt, topic); err != nil {
			return p, limit, err
		}
		if err := b.put(mgmt, "/topics/"+topic+"/eventSubscriptions/q", `{"properties":{"deliveryConfiguration":{"deliveryMode":"Queue","queue":{"receiveLockDurationInSeconds":60}}}}`); err != nil {
			return p, limit, err
		}
		request = "POST /topics/" + topic + "/eventSubscriptions/q:receive?api-version=2024-06-01&maxWaitTime=60 HTTP/1.1\r\nHost: broker\r\nContent-Length: 0\r\n\r\n"
	}
	mgmt.CloseIdleConnections()
	settle(b.pid)
	idle, err := procMem(b.pid)
	if err != nil {
		return p, limit, err
	}
	before, err := socketsOf(b.pid)
	if err != nil {
		return p, limit, err
	}
	p.Clients, p.IdleRSS = idleClients, idle.RSS

	addr := strings.TrimPrefix(b.url, "http://")
	conns := make([]*idleConn, idleClients)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range idleDialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= idleClients {
					return
				}
				conns[i] = openIdle(addr, request, &p)
			}
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.conn.Close()
			}
		}
	}()
	// Every client has its answer, or waits: count once the broker's
	// memory and sockets no longer move.
	settle(b.pid)
	for _, c := range conns {
		if c != nil && !c.answered {
			p.NoAnswer++
		}
	}
	held, err := socketsOf(b.pid)
	if err != nil {
		return p, limit, err
	}
	p.SocketsHeld = held - before
	mem, err := procMem(b.pid)
	if err != nil {
		return p, limit, err
	}
	p.RSS = mem.RSS
	// Of the connections the clients still hold, those the broker closed
	// read their end at once.
	for _, c := range conns {
		if c != nil && c.closedByPeer() {
			p.ClosedByBroker++
		}
	}
	return p, limit, nil
}

// idleConn is one client of scenario k.
type idleConn struct {
	conn     net.Conn
	r        *bufio.Reader
	answered bool
}

// openIdle connects, sends request and reads its answer if one comes
// within a second; nil when it could not connect.
func openIdle(addr, request string, p *idlePhase) *idleConn {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		atomic.AddInt64(&p.ConnectFailed, 1)
		return nil
	}
	ic := &idleConn{conn: c, r: bufio.NewReader(c)}
	if _, err := io.WriteString(c, request); err != nil {
		return ic
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	resp, err := http.ReadResponse(ic.r, nil)
	if err != nil {
		return ic // a long poll waits
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ic.answered = true
	switch resp.StatusCode {
	case http.StatusOK:
		atomic.AddInt64(&p.Answered200, 1)
	case http.StatusServiceUnavailable:
		atomic.AddInt64(&p.Answered503, 1)
		if strings.Contains(string(body), "TooManyConnections") {
			atomic.AddInt64(&p.RefusedForConn, 1)
		}
	}
	return ic
}

// closedByPeer reports whether the broker has closed the connection: a
// read ends at once, rather than waiting.
func (c *idleConn) closedByPeer() bool {
	_ = c.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := c.r.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// socketsOf counts the open file descriptors of pid that are sockets.
func socketsOf(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n, nil
}
