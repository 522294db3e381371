package tests_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// sink is a webhook subscriber: a real HTTP server on a loopback port that
// records every request. Its respond function decides each answer.
type sink struct {
	*httptest.Server
	// respond returns the status for the n-th request (from 1); nil means 200.
	respond func(n int, r *http.Request) int

	mu   sync.Mutex
	reqs []received
}

type received struct {
	at     time.Time
	header http.Header
	body   []byte
	status int
}

func newSink(t testing.TB, respond func(n int, r *http.Request) int) *sink {
	s := &sink{respond: respond}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs) + 1
		s.reqs = append(s.reqs, received{at: time.Now(), header: r.Header.Clone(), body: b})
		s.mu.Unlock()
		status := http.StatusOK
		if s.respond != nil {
			status = s.respond(n, r)
		}
		if err != nil {
			// The broker gave up on the request mid-body (its delivery
			// timeout): whatever the answer, nothing was accepted.
			status = http.StatusBadRequest
		}
		s.mu.Lock()
		s.reqs[n-1].status = status
		s.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns a copy of what the sink received.
func (s *sink) requests() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.reqs...)
}

// accepted returns, per event id, how many times the sink accepted it.
func (s *sink) accepted(t testing.TB) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, r := range s.requests() {
		if r.status < 200 || r.status > 204 {
			continue
		}
		var evs []map[string]any
		if err := json.Unmarshal(r.body, &evs); err != nil {
			t.Fatalf("delivery body is not a JSON array: %v: %s", err, r.body)
		}
		for _, ev := range evs {
			m[fmt.Sprint(ev["id"])]++
		}
	}
	return m
}

// waitAccepted waits until the sink has accepted n distinct events.
func (s *sink) waitAccepted(t testing.TB, n int, timeout time.Duration) map[string]int {
	t.Helper()
	var got map[string]int
	eventually(t, timeout, func() error {
		got = s.accepted(t)
		if len(got) < n {
			return fmt.Errorf("sink accepted %d of %d events", len(got), n)
		}
		return nil
	})
	return got
}
