package webhooktest

import (
	"context"
	"net"
	"sync"
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
)

// Receiver is the CloudEvents Go SDK's client receiving on a loopback port
// (client.StartReceiver), recording every event it is given.
type Receiver struct {
	// URL is where the receiver listens, ending in "/".
	URL string

	mu     sync.Mutex
	events []cloudevents.Event
}

// StartReceiver starts a Receiver with the SDK's HTTP options opts; it
// stops when the test ends.
func StartReceiver(tb testing.TB, opts ...cehttp.Option) *Receiver {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	c, err := cloudevents.NewClientHTTP(append([]cehttp.Option{cehttp.WithListener(ln)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	r := &Receiver{URL: "http://" + ln.Addr().String() + "/"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.StartReceiver(ctx, func(ev cloudevents.Event) {
			r.mu.Lock()
			r.events = append(r.events, ev)
			r.mu.Unlock()
		})
	}()
	tb.Cleanup(func() { cancel(); <-done })
	return r
}

// Received returns a copy of the events received so far.
func (r *Receiver) Received() []cloudevents.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cloudevents.Event(nil), r.events...)
}
