package push_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// resetError returns the error of a read on a loopback connection that the
// other end reset: a *net.OpError whose text names both ends.
func resetError(t *testing.T) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	_ = s.(*net.TCPConn).SetLinger(0) // close with a reset
	s.Close()
	_, err = c.Read(make([]byte, 1))
	var op *net.OpError
	if !errors.As(err, &op) || op.Source == nil {
		t.Fatalf("read after a reset: %v (%T), want a *net.OpError naming the local address", err, err)
	}
	return err
}

// TestRedact: the text of a failed attempt leaves out the broker host's
// resolver and local address, wherever the standard library's errors put
// them, also once flattened into another error's text; the error keeps
// its chain, and one without such an address is returned as it is.
func TestRedact(t *testing.T) {
	dns := &net.DNSError{Err: "no such host", Name: "sink.example", Server: "10.255.255.53:53", IsNotFound: true}
	dns6 := &net.DNSError{Err: "server misbehaving", Name: "sink.example", Server: "[fd00::53]:53", IsTemporary: true}
	dial := &url.Error{Op: "Post", URL: "https://sink.example/hook?code=secret",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: dns}}
	reset := resetError(t)
	local := reset.(*net.OpError).Source.String()
	for _, tt := range []struct {
		name string
		err  error
		want string // the text, or what it must hold
	}{
		{"Lookup", dns, "lookup sink.example: no such host"},
		{"LookupIPv6Resolver", dns6, "lookup sink.example: server misbehaving"},
		{"DialLookup", dial.Err, "dial tcp: lookup sink.example: no such host"},
		{"Wrapped", fmt.Errorf("webhook: %w", dial.Err), "webhook: dial tcp: lookup sink.example: no such host"},
		{"Flattened", fmt.Errorf("network Error : %v", dial.Err), "network Error : dial tcp: lookup sink.example: no such host"},
		{"Joined", errors.Join(errors.New("first"), dns), "first\nlookup sink.example: no such host"},
		{"LocalAddress", reset, "read tcp " + reset.(*net.OpError).Addr.String() + ": "},
		{"LocalAddressFlattened", fmt.Errorf("publish: %v", reset), "publish: read tcp " + reset.(*net.OpError).Addr.String() + ": "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := push.Redact(tt.err)
			text := got.Error()
			if !strings.HasPrefix(text, tt.want) {
				t.Errorf("text %q, want %q", text, tt.want)
			}
			if push.ErrorText(tt.err) != text {
				t.Errorf("ErrorText %q, Redact %q", push.ErrorText(tt.err), text)
			}
			for _, addr := range []string{"10.255.255.53", "fd00::53", local} {
				if strings.Contains(text, addr) {
					t.Errorf("text %q names %s", text, addr)
				}
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("the redacted error does not wrap the original")
			}
		})
	}
	var de *net.DNSError
	if got := push.Redact(fmt.Errorf("webhook: %w", dial.Err)); !errors.As(got, &de) || de.Server != dns.Server {
		t.Errorf("errors.As finds %v through the redacted error", de)
	}
	plain := fmt.Errorf("webhook: %w", context.DeadlineExceeded)
	if got := push.Redact(plain); got != plain {
		t.Errorf("an error without addresses came back as %v (%T)", got, got)
	}
	remote := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(203, 0, 113, 5), Port: 443}, Err: errors.New("connect: connection refused")}
	if got := push.Redact(remote); got != error(remote) {
		t.Errorf("the destination's own address was taken out: %v", got)
	}
	if push.Redact(nil) != nil || push.ErrorText(nil) != "" {
		t.Error("nil")
	}
}

// TestEngine_ErrorTextRedacted: whatever the sender, what the engine shows
// of a failed attempt (the subscription's lastError, a peek, the outcome
// stream) leaves out the broker host's resolver, which the sender's error
// names.
func TestEngine_ErrorTextRedacted(t *testing.T) {
	board := inspect.New(inspect.Options{MaxFailures: 10, MaxFailureBytes: 1 << 20})
	lookup := fmt.Errorf("edgehub: not connected: %v", &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "edgehub", Server: "10.255.255.53:53", IsNotFound: true}})
	e, _, _, _ := clockedEngine(t, func(o *push.Options) { o.Board = board }, func(int) error { return lookup })
	sub := newSub(e, "s")
	watch := board.Subscription(sub.UID).Watch()
	defer watch.Close()
	mustPublish(t, e, []*eventgrid.EventSubscription{sub}, newEvent("e1", 100))
	waitStats(t, e, sub, func(st push.QueueStats) bool { return st.Backoff[0] == 1 && st.InFlight == 0 })
	const want = "edgehub: not connected: dial tcp: lookup edgehub: no such host"
	if st, _ := e.QueueStats(sub); st.LastError != want {
		t.Errorf("lastError %q, want %q", st.LastError, want)
	}
	if p, _ := e.Peek(sub, 1); len(p.Events) != 1 || p.Events[0].LastError != want {
		t.Errorf("peek %+v", p)
	}
	brokertest.Eventually(t, 5*time.Second, func() error {
		items, _, _ := watch.Take(nil)
		for _, it := range items {
			if strings.Contains(string(it.Data), "10.255.255.53") || !strings.Contains(string(it.Data), want) {
				t.Fatalf("outcome %s", it.Data)
			}
			return nil
		}
		return errors.New("no outcome yet")
	})
}
