package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/endpointtest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

func oneEvent(url string) *push.Batch {
	return &push.Batch{Subscription: &eventgrid.EventSubscription{Topic: "t", Name: "s",
		EventDeliverySchema: eventgrid.EventGridSchema,
		Destination:         eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: url}},
		Bodies: [][]byte{[]byte(`{"id":"1","dataVersion":"1"}`)}}
}

func sendOK(t *testing.T, s *Sender, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Send(ctx, oneEvent(url)); err != nil {
		t.Fatal(err)
	}
}

// idleConns is how many connections s keeps idle in all.
func (s *Sender) idleConns() int { return s.conns.Stats().Idle }

func TestConns_KeptAliveAndUsedAgain(t *testing.T) {
	var got atomic.Value
	srv := endpointtest.NewCounted(t, nil, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Method + " " + r.RequestURI + " " + r.Host + " " + r.Header.Get("User-Agent") + " " +
			r.Header.Get("Content-Length") + " " + string(b))
	})
	s := New(Options{UserAgent: "edgegrid/test"})
	for range 5 {
		sendOK(t, s, srv.URL+"/api/x?code=1")
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if want := "POST /api/x?code=1 " + host + ` edgegrid/test 30 [{"id":"1","dataVersion":"1"}]`; got.Load() != want {
		t.Errorf("the endpoint got %q, want %q", got.Load(), want)
	}
	if n := srv.Accepted.Load(); n != 1 {
		t.Errorf("%d connections for 5 requests one after another, want 1", n)
	}
}
func TestConns_AtMostMaxPerHost(t *testing.T) {
	release := make(chan struct{})
	var in atomic.Int64
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {
		in.Add(1)
		<-release
	})
	s := New(Options{MaxConnsPerHost: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			errs <- s.Send(ctx, oneEvent(srv.URL))
		})
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		if in.Load() < 2 {
			return errors.New("two requests have not arrived yet")
		}
		return nil
	})
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if p := srv.Peak.Load(); p != 2 {
		t.Errorf("at most %d connections open at once, want 2", p)
	}
	if n := s.idleConns(); n != 2 {
		t.Errorf("%d idle connections kept, want 2", n)
	}
}

func TestConns_WaiterGivesUpWithItsContext(t *testing.T) {
	release := make(chan struct{})
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) { <-release })
	s := New(Options{MaxConnsPerHost: 1})
	first := make(chan error, 1)
	go func() { first <- s.Send(context.Background(), oneEvent(srv.URL)) }()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if srv.Accepted.Load() == 0 {
			return errors.New("the first request holds no connection yet")
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := s.Send(ctx, oneEvent(srv.URL))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the waiting request ended with %v, want a timeout", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	sendOK(t, s, srv.URL) // the one connection is given back, not lost
	if n := srv.Accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestConns_Answers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		status  int
		reused  bool
	}{
		{"EmptyBody", func(http.ResponseWriter, *http.Request) {}, 0, true},
		{"ShortBody", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }, 0, true},
		{"Chunked", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "a")
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, "b")
		}, 0, true},
		{"EarlyHintsFirst", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Link", "</x>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusOK)
		}, 0, true},
		{"BodyPastTheDrain", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write(make([]byte, 64<<10+1)) // past what is read of an answer's body
		}, 0, false},
		{"ConnectionClose", func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Connection", "close") }, 0, false},
		{"Failure", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "7")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}, http.StatusServiceUnavailable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := endpointtest.NewCounted(t, nil, tc.handler)
			s := New(Options{})
			for range 2 {
				err := s.Send(context.Background(), oneEvent(srv.URL))
				var e *Error
				switch {
				case tc.status == 0 && err != nil:
					t.Fatal(err)
				case tc.status != 0 && (!errors.As(err, &e) || e.Status != tc.status || e.Wait != 7*time.Second):
					t.Fatalf("got %v, want status %d with Retry-After 7 s", err, tc.status)
				}
			}
			want := int64(2)
			if tc.reused {
				want = 1
			}
			if n := srv.Accepted.Load(); n != want {
				t.Errorf("%d connections for two requests, want %d", n, want)
			}
		})
	}
}

func TestConns_InvalidHeaderSendsNothing(t *testing.T) {
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {})
	s := New(Options{})
	b := oneEvent(srv.URL)
	b.Subscription.Destination.DeliveryAttributes = []eventgrid.DeliveryAttribute{
		{Name: "X-Token", Type: "Static", Value: "a\r\nInjected: yes"}}
	err := s.Send(context.Background(), b)
	if err == nil || !strings.Contains(err.Error(), `invalid header field value for "X-Token"`) || strings.Contains(err.Error(), "Injected") {
		t.Fatalf("got %v, want the header named and its value left out", err)
	}
	if n := srv.Accepted.Load(); n != 0 {
		t.Errorf("%d connections, want none", n)
	}
}

func TestConns_CancelledWhileWaitingForTheAnswer(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) { <-release })
	s := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Send(ctx, oneEvent(srv.URL)) }()
	brokertest.Eventually(t, 5*time.Second, func() error {
		if srv.Accepted.Load() == 0 {
			return errors.New("no request yet")
		}
		return nil
	})
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want the context's cancellation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not end with its context")
	}
	if n := s.idleConns(); n != 0 {
		t.Errorf("%d idle connections, want none: the cancelled one is closed", n)
	}
}

func TestConns_TLS(t *testing.T) {
	ca := testpki.NewCA(t, "edgegrid test CA")
	cert := ca.Issue(t, "127.0.0.1", nil, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(time.Hour), x509.ExtKeyUsageServerAuth)
	srv := endpointtest.NewCounted(t, &tls.Config{Certificates: []tls.Certificate{cert}}, func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	s := New(Options{TLSConfig: &tls.Config{RootCAs: ca.Pool()}})
	for range 3 {
		sendOK(t, s, srv.URL)
	}
	if n := srv.Accepted.Load(); n != 1 {
		t.Errorf("%d TLS connections for 3 requests, want 1", n)
	}
	// A plain endpoint behind an https URL is told apart, as net/http does.
	plain := endpointtest.NewCounted(t, nil, func(http.ResponseWriter, *http.Request) {})
	err := s.Send(context.Background(), oneEvent(strings.Replace(plain.URL, "http:", "https:", 1)))
	if !errors.Is(err, http.ErrSchemeMismatch) {
		t.Errorf("got %v, want http.ErrSchemeMismatch", err)
	}
}

func TestConns_BodiesOfEverySize(t *testing.T) {
	// Bodies in one write with the header, in the connection's buffer, and
	// in chunks of a borrowed one, each whole at the endpoint.
	var mu sync.Mutex
	var got []byte
	srv := endpointtest.NewCounted(t, nil, func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = b
		mu.Unlock()
	})
	s := New(Options{})
	for _, n := range []int{1, 10, 100, 1000} {
		b := oneEvent(srv.URL)
		b.Bodies = nil
		want := []byte{'['}
		for i := range n {
			ev := []byte(`{"id":"` + strings.Repeat("x", i%50) + `","dataVersion":"1"}`)
			b.Bodies = append(b.Bodies, ev)
			if i > 0 {
				want = append(want, ',')
			}
			want = append(want, ev...)
		}
		want = append(want, ']')
		if err := s.Send(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if string(got) != string(want) {
			t.Errorf("%d events: the endpoint got %d bytes, want %d", n, len(got), len(want))
		}
		mu.Unlock()
	}
	if n := srv.Accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestConns_AnswerBeforeTheBodyIsRead(t *testing.T) {
	// The endpoint refuses a body too large without reading it, and closes
	// the connection: the sender reports the 413, not the failed write.
	srv := endpointtest.NewCounted(t, nil, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	})
	s := New(Options{})
	b := oneEvent(srv.URL)
	b.Bodies = [][]byte{[]byte(`{"id":"1","data":"` + strings.Repeat("x", 32<<20) + `"}`)}
	err := s.Send(context.Background(), b)
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusRequestEntityTooLarge {
		t.Fatalf("got %v, want 413", err)
	}
}
