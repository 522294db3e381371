package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The relay is what the broker is measured against in scenarios ar and br:
// a bare Go HTTP relay, the least a broker can do. It answers the topic and
// subscription PUTs the scenarios send, and forwards each publish request
// to every subscription of its topic before answering it, as the requests
// the broker would send: one request in, one out, split into requests of
// maxEventsPerBatch events when the subscription sets it and the publish
// request holds more. No validation, no queue, no retries: a failed
// forward is answered 502. It runs as a child process, started and
// measured as the broker is: this program, run again with relayEnv set,
// stopped by SIGTERM.
const relayEnv = "EDGEGRID_BENCH_RELAY"

// relayBinary returns the command that starts the relay: this executable.
func relayBinary() (string, error) {
	return os.Executable()
}

// relaySub is a subscription the relay forwards to.
type relaySub struct {
	url   string
	batch int // maxEventsPerBatch; 0 forwards each publish request whole
}

type relay struct {
	client *http.Client
	mu     sync.RWMutex
	subs   map[string]map[string]relaySub // by topic, then name
}

// runRelay serves the relay on a free loopback port until SIGTERM,
// logging its address the way the broker does.
func runRelay() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	r := &relay{
		client: &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, DisableCompression: true},
			Timeout: time.Minute},
		subs: map[string]map[string]relaySub{},
	}
	line, _ := json.Marshal(map[string]string{"level": "info", "scheme": "http", "addr": ln.Addr().String(), "message": "listening"})
	fmt.Println(string(line))
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case req.Method == http.MethodGet && req.URL.Path == "/healthz":
	case req.Method == http.MethodPut && len(parts) == 2 && parts[0] == "topics":
	case req.Method == http.MethodPut && len(parts) == 4 && parts[2] == "eventSubscriptions":
		if err := r.subscribe(parts[1], parts[3], req.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	case req.Method == http.MethodPost && len(parts) == 3 && parts[2] == "events":
		w.WriteHeader(r.forward(parts[1], req))
		return
	default:
		http.NotFound(w, req)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// subscribe records a WebHook subscription's endpoint and batch size.
func (r *relay) subscribe(topic, name string, body io.Reader) error {
	var sub struct {
		Properties struct {
			Destination struct {
				Properties struct {
					EndpointURL       string `json:"endpointUrl"`
					MaxEventsPerBatch int    `json:"maxEventsPerBatch"`
				} `json:"properties"`
			} `json:"destination"`
		} `json:"properties"`
	}
	if err := json.NewDecoder(body).Decode(&sub); err != nil {
		return err
	}
	p := sub.Properties.Destination.Properties
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subs[topic] == nil {
		r.subs[topic] = map[string]relaySub{}
	}
	r.subs[topic][name] = relaySub{url: p.EndpointURL, batch: p.MaxEventsPerBatch}
	return nil
}

// forward sends a publish request's events to the topic's subscriptions
// and returns the status to answer.
func (r *relay) forward(topic string, req *http.Request) int {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return http.StatusBadRequest
	}
	r.mu.RLock()
	subs := make([]relaySub, 0, len(r.subs[topic]))
	for _, s := range r.subs[topic] {
		subs = append(subs, s)
	}
	r.mu.RUnlock()
	var events [][]byte
	for _, s := range subs {
		parts := [][]byte{body}
		if s.batch > 0 {
			if events == nil {
				if events, err = splitArray(body); err != nil {
					return http.StatusBadRequest
				}
			}
			if len(events) > s.batch {
				parts = joinChunks(events, s.batch)
			}
		}
		for _, p := range parts {
			if !r.post(s.url, p) {
				return http.StatusBadGateway
			}
		}
	}
	return http.StatusOK
}

// post sends one delivery request and reports whether it succeeded.
func (r *relay) post(url string, body []byte) bool {
	resp, err := r.client.Post(url, "application/json; charset=utf-8", bytes.NewReader(body))
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode <= 204
}

// splitArray returns the elements of a JSON array as they are written.
func splitArray(b []byte) ([][]byte, error) {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, errors.New("not a JSON array")
	}
	var out [][]byte
	depth, start, inString, escaped := 0, 1, false, false
	for i := 1; i < len(b)-1; i++ {
		c := b[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 0:
			out = append(out, bytes.TrimSpace(b[start:i]))
			start = i + 1
		}
	}
	if last := bytes.TrimSpace(b[start : len(b)-1]); len(last) > 0 {
		out = append(out, last)
	}
	return out, nil
}

// joinChunks lays events out as JSON arrays of at most n events each.
func joinChunks(events [][]byte, n int) [][]byte {
	var out [][]byte
	for len(events) > 0 {
		k := min(n, len(events))
		out = append(out, append(append([]byte{'['}, bytes.Join(events[:k], []byte{','})...), ']'))
		events = events[k:]
	}
	return out
}
