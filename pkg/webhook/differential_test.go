package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/endpointtest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// The differential tests run the same endpoint behaviours through the two
// ways a delivery request goes: over the sender's own connections (package
// h1), which take every http and https URL that no proxy serves, and
// through net/http's Transport as NewHTTPClient configures it, which takes
// the others. They compare what the sender reports of each: the status,
// whether the attempt failed, and how many connections the endpoint
// accepted.

// route is one way of sending a request.
type route string

const (
	viaH1        route = "h1"
	viaTransport route = "Transport"
)

var routes = []route{viaH1, viaTransport}

// deliverVia sends b as post does, the way r says, and returns what the
// sender makes of the outcome.
func deliverVia(ctx context.Context, s *Sender, b *push.Batch, r route) error {
	p, ok := arrayPayload(b)
	if !ok {
		return errors.New("not a batch-mode subscription")
	}
	ep, err := s.endpoints.get(b.Subscription.Destination.EndpointURL)
	if err != nil {
		return err
	}
	h := s.header(b, p)
	var resp *http.Response
	if r == viaH1 {
		if !ep.direct {
			return fmt.Errorf("%s would not go over the sender's own connections", b.Subscription.Destination.EndpointURL)
		}
		resp, err = s.conns.Post(ctx, &ep.target, h, p.body.parts)
		resp, err = answer(ep.u, resp, err)
	} else {
		resp, err = s.send(ctx, ep, h, p.body)
	}
	if err != nil {
		return RequestError(ctx, "webhook", err)
	}
	return CheckResponse("webhook", resp, func(status int) bool { return status >= 200 && status <= 204 }, time.Now())
}

// outcome is what the sender reported of a request: the status answered
// (0 for none) and whether the attempt failed.
type outcome struct {
	Status int
	Failed bool
}

func outcomeOf(err error) outcome {
	var e *Error
	switch {
	case err == nil:
		return outcome{Status: 200}
	case errors.As(err, &e):
		return outcome{Status: e.Status, Failed: true}
	}
	return outcome{Failed: true}
}

// started is a running endpoint: its URL, and the connections it
// accepted and has open (nil when it does not count them).
type started struct {
	url            string
	accepted, open *atomic.Int64
}

// behaviour is an endpoint that behaves some way, started afresh for each
// route.
type behaviour struct {
	name  string
	start func(t *testing.T) started
	// between, if not nil, runs between the two requests.
	between func(t *testing.T, e started)
	// timeout is each request's; 10 s when 0.
	timeout time.Duration
}

// served is an http.Server endpoint answering by h, configured by
// configure.
func served(h http.HandlerFunc, configure ...func(*http.Server)) func(t *testing.T) started {
	return func(t *testing.T) started {
		srv := endpointtest.NewCounted(t, nil, h, configure...)
		return started{srv.URL, &srv.Accepted, &srv.Open}
	}
}

// raw is an endpoint writing answer, as it is, to every request.
func raw(answer string) func(t *testing.T) started {
	return func(t *testing.T) started {
		url, accepted := endpointtest.Raw(t, answer)
		return started{url: url, accepted: accepted}
	}
}

// behaviours are the endpoints both routes are run against.
var behaviours = []behaviour{
	{name: "KeepAlive", start: served(func(http.ResponseWriter, *http.Request) {})},
	{name: "ConnectionClose", start: served(func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Connection", "close") })},
	{name: "Chunked", start: served(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "a")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, "b")
	})},
	{name: "LengthDelimited", start: served(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "2")
		_, _ = io.WriteString(w, "ok")
	})},
	{name: "Failure", start: served(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) })},
	{name: "EarlyHints", start: served(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Link", "</x>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusOK)
	})},
	{name: "SwitchingProtocols", start: raw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n")},
	{name: "BodyWithNoContent", start: raw("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello")},
	{name: "BodyWithNotModified", start: raw("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\nhello")},
	{name: "HTTP10", start: raw("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")},
	{name: "HTTP10KeepAlive", start: raw("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok")},
	{name: "MalformedStatusLine", start: raw("HTTP/1.1 2x0 OK\r\n\r\n")},
	{name: "OversizedHeader", start: raw("HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", 2<<20) + "\r\n\r\n")},
	{name: "SlowBody", start: served(slowBody(3, 20*time.Millisecond))},
	// The status stands; the connection, its body unread, goes.
	{name: "SlowBodyPastTheTimeout", start: served(slowBody(3, time.Second)), timeout: 300 * time.Millisecond},
	{name: "ClosesAnIdleConnection", start: served(func(http.ResponseWriter, *http.Request) {},
		func(s *http.Server) { s.IdleTimeout = 5 * time.Millisecond }), between: closedByTheEndpoint},
}

// slowBody answers 200 at once, and a body of n bytes, one every pause.
func slowBody(n int, pause time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(n))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for range n {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(pause):
			}
			_, _ = io.WriteString(w, "x")
			w.(http.Flusher).Flush()
		}
	}
}

// closedByTheEndpoint waits until the endpoint has closed its idle
// connection, and past the age at which an idle connection is checked
// before it carries a request (50 ms, package h1): the Transport learns
// of the close at once, as it always reads, and the sender's own
// connections when it checks.
func closedByTheEndpoint(t *testing.T, e started) {
	brokertest.Eventually(t, 5*time.Second, func() error {
		if n := e.open.Load(); n != 0 {
			return errors.New("the endpoint has not closed the idle connection yet")
		}
		return nil
	})
	time.Sleep(60 * time.Millisecond)
}

// runBehaviour sends two requests to a fresh endpoint of b, one after the
// other, the way r says, and returns what the sender reported of each and
// how many connections the endpoint accepted.
func runBehaviour(t *testing.T, b behaviour, r route) ([2]outcome, int64) {
	e := b.start(t)
	s := New(Options{})
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	timeout := b.timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	var got [2]outcome
	for i := range got {
		if i == 1 && b.between != nil {
			b.between(t, e)
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		got[i] = outcomeOf(deliverVia(ctx, s, oneEvent(e.url), r))
		cancel()
	}
	return got, e.accepted.Load()
}

func TestDifferential_Behaviours(t *testing.T) {
	for _, b := range behaviours {
		t.Run(b.name, func(t *testing.T) {
			h1Got, h1Conns := runBehaviour(t, b, viaH1)
			trGot, trConns := runBehaviour(t, b, viaTransport)
			t.Logf("h1: %+v, %d connections; Transport: %+v, %d connections", h1Got, h1Conns, trGot, trConns)
			if h1Got != trGot {
				t.Errorf("h1 reported %+v, the Transport %+v", h1Got, trGot)
			}
			if h1Conns != trConns {
				t.Errorf("h1 took %d connections for two requests, the Transport %d", h1Conns, trConns)
			}
		})
	}
}

// tlsEndpoint serves https on 127.0.0.1 with cfg, recording the server
// name each client asked for and the common name of each client
// certificate.
type tlsEndpoint struct {
	*httptest.Server
	accepted     atomic.Int64
	mu           sync.Mutex
	names, peers []string
}

func newTLSEndpoint(t *testing.T, cfg *tls.Config) *tlsEndpoint {
	e := &tlsEndpoint{}
	e.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, c := range r.TLS.PeerCertificates[:1] {
			e.peers = append(e.peers, c.Subject.CommonName)
		}
	}))
	cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.names = append(e.names, hello.ServerName)
		return nil, nil
	}
	e.TLS = cfg
	e.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			e.accepted.Add(1)
		}
	}
	e.StartTLS()
	t.Cleanup(e.Close)
	return e
}

func TestDifferential_TLSWithSNIAndClientCertificate(t *testing.T) {
	ca := testpki.NewCA(t, "edgegrid test CA")
	server := ca.Issue(t, "localhost", []string{"localhost"}, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageServerAuth)
	client := ca.Issue(t, "edgegrid-client", nil, nil, time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth)
	withCert := &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{client}}
	dialTLS := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&tls.Dialer{Config: withCert}).DialContext(ctx, network, addr)
	}
	for _, tc := range []struct {
		name   string
		opts   Options
		failed bool
	}{
		{"TLSConfig", Options{TLSConfig: withCert}, false},
		{"DialTLSContext", Options{TLSConfig: withCert, DialTLSContext: dialTLS}, false},
		{"NoClientCertificate", Options{TLSConfig: &tls.Config{RootCAs: ca.Pool()}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range routes {
				e := newTLSEndpoint(t, &tls.Config{Certificates: []tls.Certificate{server},
					ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()})
				url := strings.Replace(e.URL, "127.0.0.1", "localhost", 1) + "/api/events"
				s := New(tc.opts)
				for range 2 {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					got := outcomeOf(deliverVia(ctx, s, oneEvent(url), r))
					cancel()
					if want := (outcome{Status: 200}); !tc.failed && got != want || tc.failed && got != (outcome{Failed: true}) {
						t.Errorf("%s: got %+v, want failed %v", r, got, tc.failed)
					}
				}
				_ = s.Close(context.Background())
				e.mu.Lock()
				if len(e.names) == 0 || e.names[0] != "localhost" || !tc.failed && !slices.Equal(e.peers, []string{"edgegrid-client", "edgegrid-client"}) {
					t.Errorf("%s: server names asked for %q, client certificates %q", r, e.names, e.peers)
				}
				e.mu.Unlock()
				if n := e.accepted.Load(); !tc.failed && n != 1 {
					t.Errorf("%s: %d connections for two requests, want 1", r, n)
				}
			}
		})
	}
}

// proxyChild names the variable that makes TestDifferential_ProxyFromEnvironment
// the child process it starts: HTTP_PROXY is read once per process, so the
// child is started with it set.
const proxyChild = "EDGEGRID_TEST_PROXY_CHILD"

func TestDifferential_ProxyFromEnvironment(t *testing.T) {
	if os.Getenv(proxyChild) != "" {
		proxiedChild(t)
		return
	}
	// The proxy answers every request it is asked to forward with 200:
	// no request leaves the machine.
	var mu sync.Mutex
	var asked []string
	proxy := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.RequestURI)
		mu.Unlock()
	}))
	defer proxy.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDifferential_ProxyFromEnvironment$", "-test.count=1", "-test.v")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.EqualFold(k, "HTTP_PROXY") && !strings.EqualFold(k, "HTTPS_PROXY") &&
			!strings.EqualFold(k, "NO_PROXY") && k != "REQUEST_METHOD" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, proxyChild+"=1", "HTTP_PROXY="+proxy.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child with HTTP_PROXY set failed: %v\n%s", err, out)
	}
	t.Logf("the child with HTTP_PROXY set:\n%s", out)
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"POST http://receiver.invalid/api/events"}; !slices.Equal(asked, want) {
		t.Errorf("the proxy was asked %q, want %q", asked, want)
	}
}

// proxiedChild runs with HTTP_PROXY set: a URL the proxy serves is not
// sent over the sender's own connections but through net/http, and
// reaches the proxy; a loopback URL, which no proxy serves, goes direct.
func proxiedChild(t *testing.T) {
	s := New(Options{})
	defer s.Close(context.Background())
	proxied := "http://receiver.invalid/api/events"
	if ep, err := s.endpoints.get(proxied); err != nil || ep.direct {
		t.Fatalf("%s: direct %v (%v), want it routed through net/http", proxied, ep != nil && ep.direct, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Send(ctx, oneEvent(proxied)); err != nil {
		t.Fatal(err)
	}
	local := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {})
	if ep, err := s.endpoints.get(local.URL); err != nil || !ep.direct {
		t.Fatalf("%s: not direct (%v), want it over the sender's own connections", local.URL, err)
	}
	sendOK(t, s, local.URL)
	if st := s.conns.Stats(); st.Open != 1 {
		t.Errorf("%+v: want the loopback request's connection kept by the sender", st)
	}
}
