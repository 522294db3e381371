package h1

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/endpointtest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// targetOf is the Target of rawURL.
func targetOf(t *testing.T, rawURL string) *Target {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return &Target{TLS: u.Scheme == "https", Addr: net.JoinHostPort(u.Hostname(), port), Host: u.Host, URI: u.RequestURI()}
}

// newClient returns a Client dialling as the broker does, closed when the
// test ends.
func newClient(t *testing.T, o Options) *Client {
	t.Helper()
	if o.Dial == nil {
		o.Dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
	}
	c := New(o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return c
}

var oneEvent = [][]byte{[]byte(`[{"id":"1"}]`)}

// post posts one event to rawURL within timeout.
func post(c *Client, t *testing.T, rawURL string, timeout time.Duration) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.Post(ctx, targetOf(t, rawURL), http.Header{"Content-Type": {"application/json"}}, oneEvent)
}

func postOK(c *Client, t *testing.T, rawURL string) {
	t.Helper()
	resp, err := post(c, t, rawURL, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
}

func TestClient_IdleClosedByTheEndpoint(t *testing.T) {
	// The endpoint closes an idle connection a few milliseconds after an
	// answer: the next request takes a new one instead of failing.
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {},
		func(s *http.Server) { s.IdleTimeout = 5 * time.Millisecond })
	c := newClient(t, Options{})
	for i := range 3 {
		postOK(c, t, srv.URL)
		brokertest.Eventually(t, 5*time.Second, func() error {
			if n := srv.Open.Load(); n != 0 {
				return errors.New("the endpoint has not closed the idle connection yet")
			}
			return nil
		})
		time.Sleep(checkIdleAfter) // past the age at which it is checked before use
		if n := srv.Accepted.Load(); n != int64(i+1) {
			t.Fatalf("%d connections after %d requests", n, i+1)
		}
		if n := c.Stats().Idle; n != 1 {
			t.Fatalf("%d idle connections kept after %d requests, want 1: a new one is lost from the pool", n, i+1)
		}
	}
}

func TestClient_IdleSwept(t *testing.T) {
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {})
	c := newClient(t, Options{IdleTimeout: 30 * time.Millisecond})
	postOK(c, t, srv.URL)
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := c.Stats().Idle; n != 0 {
			return errors.New("the idle connection is still kept")
		}
		if n := srv.Open.Load(); n != 0 {
			return errors.New("the endpoint still has the connection open")
		}
		return nil
	})
	if hosts := c.Stats().Hosts; hosts != 0 {
		t.Errorf("%d destinations kept with nothing open", hosts)
	}
	postOK(c, t, srv.URL)
}

func TestClient_TLSKeptAlive(t *testing.T) {
	ca := testpki.NewCA(t, "edgegrid test CA")
	cert := ca.Issue(t, "127.0.0.1", nil, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(time.Hour), x509.ExtKeyUsageServerAuth)
	srv := endpointtest.NewCounted(t, &tls.Config{Certificates: []tls.Certificate{cert}}, func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	c := newClient(t, Options{TLSConfig: &tls.Config{RootCAs: ca.Pool()}})
	for range 3 {
		postOK(c, t, srv.URL)
		time.Sleep(checkIdleAfter) // checked before use: still open
	}
	if n := srv.Accepted.Load(); n != 1 {
		t.Errorf("%d TLS connections for 3 requests, want 1", n)
	}
}

func TestClient_NothingLeaksUnderFaults(t *testing.T) {
	// Many requests at once, of which the endpoint drops some, answers
	// some late (past their timeout) and fails some: at the end every
	// connection still counted is idle, none is lost from the count.
	var n atomic.Int64
	srv := endpointtest.NewCounted(t, nil, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch n.Add(1) % 5 {
		case 1:
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
		case 2:
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		case 3:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	c := newClient(t, Options{MaxConnsPerHost: 4})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 25 {
				_, _ = post(c, t, srv.URL, 20*time.Millisecond)
			}
		})
	}
	wg.Wait()
	// Dials of requests that gave up may still be ending.
	brokertest.Eventually(t, 10*time.Second, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, h := range c.hosts {
			if h.open != len(h.idle) || len(h.waiting) != 0 || h.dials != 0 || h.open > 4 {
				return fmt.Errorf("%s: %d open, %d idle, %d waiting, %d dials",
					h.key.addr, h.open, len(h.idle), len(h.waiting), h.dials)
			}
		}
		return nil
	})
}

func TestClient_OddAnswers(t *testing.T) {
	hint := "HTTP/1.1 103 Early Hints\r\nLink: </" + strings.Repeat("a", 64<<10) + ">; rel=preload\r\n\r\n"
	for _, tc := range []struct {
		name, answer string
		status       int    // of an answer
		err          string // in the error, when there is no answer
		reused       bool
	}{
		{"HTTP10WithoutKeepAlive", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 200, "", false},
		{"HTTP10KeepAlive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", 200, "", true},
		{"NoContent", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", true},
		// A body where there can be none is no answer to anything: the
		// connection is closed, as the Transport closes it.
		{"BodyWithNoContent", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello", 204, "", false},
		{"BodyWithNotModified", "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\nhello", 304, "", false},
		// The connection is no longer HTTP's: the answer stands, the
		// connection is closed.
		{"SwitchingProtocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n", 101, "", false},
		{"Malformed", "HTTP/1.1 2x0 OK\r\n\r\n", 0, "malformed HTTP status code", false},
		{"HeaderTooLong", "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", MaxHeaderBytes) + "\r\n\r\n", 0, "header is longer", false},
		// 1xx answers count against the bound together.
		{"EarlyHintsWithoutEnd", strings.Repeat(hint, MaxHeaderBytes/len(hint)+1), 0, "header is longer", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, accepted := endpointtest.Raw(t, tc.answer)
			c := newClient(t, Options{})
			for range 2 {
				resp, err := post(c, t, url, 10*time.Second)
				switch {
				case tc.err == "" && err != nil:
					t.Fatal(err)
				case tc.err == "" && resp.StatusCode != tc.status:
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
					t.Fatalf("got %v, want an error with %q", err, tc.err)
				}
			}
			want := int64(2)
			if tc.reused {
				want = 1
			}
			if n := accepted.Load(); n != want {
				t.Errorf("%d connections for two requests, want %d", n, want)
			}
		})
	}
}

func TestClient_OneConnectionForEveryPath(t *testing.T) {
	// Requests to ten paths of one address, as ten subscriptions of one
	// endpoint make them, share its connection.
	var paths sync.Map
	srv := endpointtest.NewCounted(t, nil, func(_ http.ResponseWriter, r *http.Request) { paths.Store(r.URL.Path, true) })
	c := newClient(t, Options{})
	for i := range 10 {
		postOK(c, t, fmt.Sprintf("%s/s/%d", srv.URL, i))
	}
	n := 0
	paths.Range(func(any, any) bool { n++; return true })
	if n != 10 {
		t.Errorf("%d paths reached, want 10", n)
	}
	if a := srv.Accepted.Load(); a != 1 {
		t.Errorf("%d connections for ten paths, want 1", a)
	}
}
