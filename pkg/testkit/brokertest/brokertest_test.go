package brokertest_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// recordingTB captures a fatal failure instead of failing the real test.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	failed string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.failed = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	panic(r) // unwound by run
}

// run calls f with a recording TB and returns the fatal message, if any.
func run(t *testing.T, f func(tb testing.TB)) (msg string) {
	tb := &recordingTB{TB: t}
	defer func() {
		if p := recover(); p != nil && p != tb {
			panic(p)
		}
		msg = tb.failed
	}()
	f(tb)
	return ""
}

func TestEventually(t *testing.T) {
	t.Run("Succeeds", func(t *testing.T) {
		n := 0
		brokertest.Eventually(t, time.Second, func() error {
			if n++; n < 3 {
				return brokertest.ErrNotYet
			}
			return nil
		})
		if n != 3 {
			t.Errorf("f called %d times, want 3", n)
		}
	})
	t.Run("ReportsLastError", func(t *testing.T) {
		n := 0
		start := time.Now()
		msg := run(t, func(tb testing.TB) {
			brokertest.Eventually(tb, 50*time.Millisecond, func() error {
				n++
				return fmt.Errorf("attempt %d", n)
			})
		})
		if !strings.Contains(msg, fmt.Sprintf("attempt %d", n)) {
			t.Errorf("failure %q does not carry the last error (attempt %d)", msg, n)
		}
		if d := time.Since(start); d < 50*time.Millisecond || n < 3 {
			t.Errorf("gave up after %v and %d calls", d, n)
		}
	})
	t.Run("CalledOnceWithZeroTimeout", func(t *testing.T) {
		n := 0
		brokertest.Eventually(t, 0, func() error { n++; return nil })
		if n != 1 {
			t.Errorf("f called %d times", n)
		}
	})
}

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Method", r.Method)
		w.Header().Set("X-Content-Type", r.Header.Get("Content-Type"))
		w.Header().Set("X-Length", fmt.Sprint(r.ContentLength))
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name       string
		ct         string
		body       any
		want, size string
	}{
		{"NoBody", "", nil, "", "0"},
		{"Bytes", "application/json", []byte(`[1]`), `[1]`, "3"},
		{"String", "text/plain", "hi", "hi", "2"},
		{"Value", "application/json", map[string]int{"a": 1}, `{"a":1}`, "7"},
		{"ReaderChunked", "", struct{ io.Reader }{bytes.NewReader([]byte("xyz"))}, "xyz", "-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, h, b := brokertest.Do(t, srv.Client(), http.MethodPost, srv.URL, tt.ct, tt.body)
			if st != http.StatusTeapot || string(b) != tt.want || h.Get("X-Content-Type") != tt.ct || h.Get("X-Length") != tt.size {
				t.Errorf("Do = %d %q, headers %v", st, b, h)
			}
		})
	}
	t.Run("BadURL", func(t *testing.T) {
		msg := run(t, func(tb testing.TB) { brokertest.Do(tb, srv.Client(), http.MethodGet, "://x", "", nil) })
		if msg == "" {
			t.Error("a bad URL did not fail the test")
		}
	})
	t.Run("Unencodable", func(t *testing.T) {
		msg := run(t, func(tb testing.TB) { brokertest.MustJSON(tb, make(chan int)) })
		if msg == "" {
			t.Error("an unencodable body did not fail the test")
		}
	})
}

func TestMustDecodeError(t *testing.T) {
	tests := []struct {
		name, body string
		ok         bool
	}{
		{"Envelope", `{"error":{"code":"BadRequest","details":{"code":"InvalidJson","message":"m"}}}`, true},
		{"ExtraMember", `{"error":{"code":"BadRequest","details":{"code":"InvalidJson","message":"m"},"x":1}}`, false},
		{"NoMessage", `{"error":{"code":"BadRequest","details":{"code":"InvalidJson"}}}`, false},
		{"NotJSON", `oops`, false},
		{"Trailing", `{"error":{"code":"BadRequest","details":{"code":"InvalidJson","message":"m"}}}{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env brokertest.ErrorEnvelope
			msg := run(t, func(tb testing.TB) { env = brokertest.MustDecodeError(tb, []byte(tt.body)) })
			if (msg == "") != tt.ok {
				t.Fatalf("failure = %q, want ok=%v", msg, tt.ok)
			}
			if tt.ok && (env.Error.Code != "BadRequest" || env.Error.Details.Code != "InvalidJson" || env.Error.Details.Message != "m") {
				t.Errorf("envelope = %+v", env)
			}
		})
	}
}
