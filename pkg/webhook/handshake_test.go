package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/testkit/webhooktest"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

func handshakeSender(timeout time.Duration) *webhook.Sender {
	return webhook.New(webhook.Options{Interop: webhook.InteropOptions{Origin: "broker.example", RequestRate: 120, HandshakeTimeout: timeout}})
}

// handshake runs s's handshake for sub and then, as the registry does
// once it has stored sub, the commit step the handshake returned.
func handshake(ctx context.Context, s *webhook.Sender, old, sub *eventgrid.EventSubscription) error {
	onStored, err := s.Handshake(ctx, old, sub)
	if err == nil && onStored != nil {
		onStored(sub)
	}
	return err
}

func validatedSub(url string, v eventgrid.ValidationMode) *eventgrid.EventSubscription {
	sub := webhookSub(url, eventgrid.EventGridSchema)
	sub.Destination.Validation = v
	return sub
}

// mustRefuse fails t unless err is an InvalidDestination error whose message
// contains want and no part of the URL's secret query.
func mustRefuse(t *testing.T, err error, want string) {
	t.Helper()
	if eventgrid.ErrorCode(err) != eventgrid.EInvalidDestination {
		t.Fatalf("error = %v, want %s", err, eventgrid.EInvalidDestination)
	}
	msg := eventgrid.ErrorMessage(err)
	if !strings.Contains(msg, want) {
		t.Errorf("message %q does not say %q", msg, want)
	}
	if strings.Contains(msg, "topsecret") {
		t.Errorf("message %q shows the URL", msg)
	}
}

// eventGridEndpoint answers validation events: with status, and the code
// it was sent unless wrongCode.
func eventGridEndpoint(t *testing.T, status int, answer func(code string) string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var evs []struct {
			EventType string `json:"eventType"`
			Data      struct {
				ValidationCode string  `json:"validationCode"`
				ValidationURL  *string `json:"validationUrl"`
			} `json:"data"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("aeg-event-type") != "SubscriptionValidation" ||
			json.Unmarshal(body, &evs) != nil || len(evs) != 1 || evs[0].EventType != "Microsoft.EventGrid.SubscriptionValidationEvent" ||
			len(evs[0].Data.ValidationCode) < 16 || evs[0].Data.ValidationURL != nil {
			t.Errorf("not a validation request: %s %v %s", r.Method, r.Header, body)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer(evs[0].Data.ValidationCode))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook?code=topsecret"
}

func echoCode(code string) string { return `{"validationResponse":"` + code + `"}` }

func TestHandshake_EventGrid(t *testing.T) {
	s := handshakeSender(300 * time.Millisecond)
	ctx := t.Context()
	t.Run("Valid", func(t *testing.T) {
		url := eventGridEndpoint(t, 200, echoCode)
		if err := handshake(ctx, s, nil, validatedSub(url, eventgrid.ValidationEventGrid)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Accepted202IsRefused", func(t *testing.T) {
		url := eventGridEndpoint(t, 202, echoCode)
		mustRefuse(t, handshake(ctx, s, nil, validatedSub(url, eventgrid.ValidationEventGrid)), "202 Accepted")
	})
	t.Run("WrongCode", func(t *testing.T) {
		url := eventGridEndpoint(t, 200, func(string) string { return `{"validationResponse":"guess"}` })
		mustRefuse(t, handshake(ctx, s, nil, validatedSub(url, eventgrid.ValidationEventGrid)), "not the validationCode")
	})
	t.Run("NoAnswer", func(t *testing.T) {
		url := eventGridEndpoint(t, 200, func(string) string { return `ok` })
		mustRefuse(t, handshake(ctx, s, nil, validatedSub(url, eventgrid.ValidationEventGrid)), `{"validationResponse"`)
	})
	t.Run("Slow", func(t *testing.T) {
		release := make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer slow.Close()
		defer close(release)
		mustRefuse(t, handshake(ctx, s, nil, validatedSub(slow.URL+"/?code=topsecret", eventgrid.ValidationEventGrid)), "did not answer within 300ms")
		// The caller's deadline, when sooner, bounds it too.
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		mustRefuse(t, handshake(short, s, nil, validatedSub(slow.URL, eventgrid.ValidationEventGrid)), "did not answer within")
		if time.Since(start) >= 300*time.Millisecond {
			t.Error("the caller's deadline did not bound the handshake")
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		mustRefuse(t, handshake(ctx, s, nil, validatedSub("http://"+addr+"/?code=topsecret", eventgrid.ValidationEventGrid)), "could not be reached")
	})
}

// optionsEndpoint answers OPTIONS with the given status and headers and
// records the requests it gets.
func optionsEndpoint(t *testing.T, status int, headers map[string]string, got chan<- http.Header) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got != nil {
			select {
			case got <- r.Header.Clone():
			default:
			}
		}
		if r.Method != http.MethodOptions {
			return
		}
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/?code=topsecret"
}

func TestHandshake_CloudEvents(t *testing.T) {
	s := handshakeSender(time.Second)
	ctx := t.Context()
	t.Run("SDKReceiver", func(t *testing.T) {
		// The CloudEvents Go SDK's own OPTIONS handler.
		r := webhooktest.StartReceiver(t, cehttp.WithDefaultOptionsHandlerFunc([]string{http.MethodPost}, 6000, []string{"*"}, false))
		sub := validatedSub(r.URL, eventgrid.ValidationCloudEvents)
		sub.EventDeliverySchema = eventgrid.CloudEventSchemaV1_0
		sub.Destination.ContentMode = eventgrid.ContentBinary
		if err := handshake(ctx, s, nil, sub); err != nil {
			t.Fatal(err)
		}
		if err := s.Send(ctx, batch(sub, 1, rawEvent(`{"specversion":"1.0","id":"1","source":"s","type":"t"}`))); err != nil {
			t.Fatal(err)
		}
		if len(r.Received()) != 1 {
			t.Fatal("no event received after the handshake")
		}
	})
	t.Run("RequestHeadersAndOriginOnDeliveries", func(t *testing.T) {
		reqs := make(chan http.Header, 2)
		url := optionsEndpoint(t, 200, map[string]string{"WebHook-Allowed-Origin": "broker.example", "WebHook-Allowed-Rate": "*"}, reqs)
		sub := validatedSub(url, eventgrid.ValidationCloudEvents)
		if err := handshake(ctx, s, nil, sub); err != nil {
			t.Fatal(err)
		}
		h := <-reqs
		if h.Get("WebHook-Request-Origin") != "broker.example" || h.Get("WebHook-Request-Rate") != "120" {
			t.Errorf("handshake headers %v", h)
		}
		if err := s.Send(ctx, batch(sub, 1, egEvent("1", "t1"))); err != nil {
			t.Fatal(err)
		}
		if h := <-reqs; h.Get("WebHook-Request-Origin") != "broker.example" {
			t.Errorf("delivery without WebHook-Request-Origin: %v", h)
		}
	})
	for _, tt := range []struct {
		name    string
		status  int
		headers map[string]string
		want    string
	}{
		{"NotAllowed405", 405, nil, "405 Method Not Allowed"},
		{"NoAllowedOrigin", 200, nil, "no WebHook-Allowed-Origin"},
		{"OtherOrigin", 200, map[string]string{"WebHook-Allowed-Origin": "someone.else"}, `allows origin "someone.else"`},
		{"BadRate", 200, map[string]string{"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "lots"}, "neither * nor a positive integer"},
		{"ZeroRate", 200, map[string]string{"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "0"}, "neither * nor a positive integer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := optionsEndpoint(t, tt.status, tt.headers, nil)
			mustRefuse(t, handshake(ctx, s, nil, validatedSub(url, eventgrid.ValidationCloudEvents)), tt.want)
		})
	}
}

// rateLimitedSub returns a subscription, stored in s with uid, whose
// endpoint agreed to rate requests a minute in its handshake.
func rateLimitedSub(t *testing.T, s *webhook.Sender, rate string, uid uint64) *eventgrid.EventSubscription {
	t.Helper()
	url := optionsEndpoint(t, 200, map[string]string{"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": rate}, nil)
	sub := validatedSub(url, eventgrid.ValidationCloudEvents)
	sub.UID = uid
	if err := handshake(t.Context(), s, nil, sub); err != nil {
		t.Fatal(err)
	}
	s.SubscriptionPut(sub)
	return sub
}

// TestHandshake_AllowedRate checks that WebHook-Allowed-Rate spaces the
// deliveries: at 600 requests a minute, one every 100 ms.
func TestHandshake_AllowedRate(t *testing.T) {
	s := handshakeSender(time.Second)
	ctx := t.Context()
	sub := rateLimitedSub(t, s, "600", 5)
	start := time.Now()
	for range 4 {
		if err := s.Send(ctx, batch(sub, 1, egEvent("1", "t1"))); err != nil {
			t.Fatal(err)
		}
	}
	// A lower bound only: the limiter can make sending slower, never faster.
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("4 deliveries at 600/min took %v, want at least 300ms", d)
	}
	t.Run("NoSlotBeforeTheTimeout", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		_ = s.Send(ctx, batch(sub, 1, egEvent("1", "t1")))
		err := s.Send(short, batch(sub, 1, egEvent("1", "t1")))
		if err == nil || !strings.Contains(err.Error(), "WebHook-Allowed-Rate") {
			t.Errorf("err = %v, want no slot before the delivery timeout", err)
		}
	})
	t.Run("ForgottenWithTheHandshake", func(t *testing.T) {
		// At one request a minute the deadline below, shorter than the
		// interval, leaves the sends time for their round trips however
		// slow the machine: at 600 a minute it had to be shorter than
		// 100 ms, for two of them.
		slow := rateLimitedSub(t, s, "1", 6)
		// The slot taken: the next is a minute away.
		if err := s.Send(ctx, batch(slow, 1, egEvent("1", "t1"))); err != nil {
			t.Fatal(err)
		}
		none := *slow
		none.Destination.Validation = eventgrid.ValidationNone
		s.SubscriptionPut(&none)
		// Without the limiter there is no slot to wait for, so even a
		// deadline shorter than the interval is enough.
		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for range 2 {
			if err := s.Send(short, batch(slow, 1, egEvent("1", "t1"))); err != nil {
				t.Fatal(err)
			}
		}
		other := *slow
		other.UID = 99
		s.SubscriptionDeleted(&other) // another lifetime of the name: no effect
	})
}

// TestHandshake_CommitStep: a handshake changes nothing by itself; what a
// CloudEvents handshake agreed takes effect when its commit step runs, and
// an EventGrid handshake has none.
func TestHandshake_CommitStep(t *testing.T) {
	s := handshakeSender(time.Second)
	ctx := t.Context()
	// twoSends reports whether two sends in a row, within less than the
	// agreed interval, both find a slot. (The interval is a minute, so
	// that the sends have seconds for their round trips.)
	twoSends := func(sub *eventgrid.EventSubscription) bool {
		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return s.Send(short, batch(sub, 1, egEvent("1", "t1"))) == nil && s.Send(short, batch(sub, 1, egEvent("2", "t1"))) == nil
	}
	url := optionsEndpoint(t, 200, map[string]string{"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "1"}, nil)
	sub := validatedSub(url, eventgrid.ValidationCloudEvents)
	onStored, err := s.Handshake(ctx, nil, sub)
	if err != nil || onStored == nil {
		t.Fatalf("Handshake = %v, %v; want a commit step", onStored != nil, err)
	}
	if !twoSends(sub) {
		t.Fatal("the agreed rate applied before the commit step ran")
	}
	onStored(sub)
	if twoSends(sub) {
		t.Fatal("the agreed rate did not apply once the commit step ran")
	}

	eg := validatedSub(eventGridEndpoint(t, 200, echoCode), eventgrid.ValidationEventGrid)
	if onStored, err := s.Handshake(ctx, nil, eg); err != nil || onStored != nil {
		t.Errorf("EventGrid Handshake = %v, %v; want no commit step", onStored != nil, err)
	}
}

func TestHandshake_When(t *testing.T) {
	s := handshakeSender(time.Second)
	ctx := t.Context()
	calls := make(chan http.Header, 10)
	url := optionsEndpoint(t, 200, map[string]string{"WebHook-Allowed-Origin": "*"}, calls)
	count := func() int {
		n := len(calls)
		for range n {
			<-calls
		}
		return n
	}
	sub := validatedSub(url, eventgrid.ValidationCloudEvents)
	for _, tt := range []struct {
		name     string
		old, new *eventgrid.EventSubscription
		want     int
	}{
		{"New", nil, sub, 1},
		{"Unchanged", sub, sub, 0},
		{"OtherSettingsChanged", sub, func() *eventgrid.EventSubscription {
			c := *sub
			c.Destination.ContentMode = eventgrid.ContentStructured
			return &c
		}(), 0},
		{"URLChanged", sub, validatedSub(url+"&v=2", eventgrid.ValidationCloudEvents), 1},
		{"ModeChanged", validatedSub(url, eventgrid.ValidationNone), sub, 1},
		{"None", nil, validatedSub(url, eventgrid.ValidationNone), 0},
		{"EventGridDestination", nil, func() *eventgrid.EventSubscription {
			c := *sub
			c.Destination.EndpointType = eventgrid.EventGrid
			return &c
		}(), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := handshake(ctx, s, tt.old, tt.new); err != nil {
				t.Fatal(err)
			}
			if n := count(); n != tt.want {
				t.Errorf("%d handshakes, want %d", n, tt.want)
			}
		})
	}
}

// TestHandshake_RateWithTheStoredSubscription: an agreed rate takes effect
// only when the registry stores the subscription it was agreed for. A put
// refused after its handshake leaves no rate behind, and the live
// subscription keeps its own.
func TestHandshake_RateWithTheStoredSubscription(t *testing.T) {
	s := handshakeSender(time.Second)
	ctx := t.Context()
	var refuse atomic.Bool
	opts := registry.DefaultOptions()
	opts.WebhookHTTPSOnly = false
	opts.MaxSubscriptionsPerTopic = 1
	opts.Handshake = func(ctx context.Context, old, sub *eventgrid.EventSubscription) (func(*eventgrid.EventSubscription), error) {
		onStored, err := s.Handshake(ctx, old, sub)
		if err != nil {
			return nil, err
		}
		if refuse.Load() {
			return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, "refused after the handshake")
		}
		return onStored, nil
	}
	reg := registry.New(opts, s)
	if _, _, err := reg.PutTopic(ctx, eventgrid.Topic{Name: "t1"}); err != nil {
		t.Fatal(err)
	}
	put := func(name, url string) (*eventgrid.EventSubscription, error) {
		sub := validatedSub(url, eventgrid.ValidationCloudEvents)
		sub.Name = name
		stored, _, err := reg.PutSubscription(ctx, *sub)
		return stored, err
	}
	// limited reports whether two sends in a row, within less than the
	// agreed interval, find the second slot taken. (The agreed rates are
	// one a minute, so that the sends have seconds for their round trips,
	// and a slot taken stays taken for the whole test.)
	limited := func(sub *eventgrid.EventSubscription) bool {
		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := s.Send(short, batch(sub, 1, egEvent("1", "t1"))); err != nil {
			t.Fatal(err)
		}
		err := s.Send(short, batch(sub, 1, egEvent("1", "t1")))
		return err != nil && strings.Contains(err.Error(), "WebHook-Allowed-Rate")
	}
	slow := optionsEndpoint(t, 200, map[string]string{"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "1"}, nil)
	live, err := put("a", slow)
	if err != nil {
		t.Fatal(err)
	}
	if !limited(live) {
		t.Fatal("the stored subscription's agreed rate is not applied")
	}

	t.Run("RefusedNewSubscription", func(t *testing.T) {
		// The topic holds its one subscription: the put is refused after
		// its handshake agreed a rate.
		other := optionsEndpoint(t, 200, map[string]string{"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "1"}, nil)
		_, err := put("b", other)
		if eventgrid.ErrorCode(err) != eventgrid.ELimitExceeded {
			t.Fatalf("put = %v, want LimitExceeded", err)
		}
		b := validatedSub(other, eventgrid.ValidationCloudEvents)
		b.Name = "b"
		if limited(b) {
			t.Error("a refused put left its agreed rate behind")
		}
	})
	t.Run("RefusedUpdate", func(t *testing.T) {
		refuse.Store(true)
		defer refuse.Store(false)
		fast := optionsEndpoint(t, 200, map[string]string{"WebHook-Allowed-Origin": "*", "WebHook-Allowed-Rate": "*"}, nil)
		if _, err := put("a", fast); eventgrid.ErrorCode(err) != eventgrid.EInvalidDestination {
			t.Fatalf("put = %v, want the refusal", err)
		}
		if cur, _ := reg.Subscription(ctx, "t1", "a"); cur != live {
			t.Fatal("the refused put changed the subscription")
		}
		// The live subscription's one slot a minute was taken above and
		// is still taken.
		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		err := s.Send(short, batch(live, 1, egEvent("1", "t1")))
		if err == nil || !strings.Contains(err.Error(), "WebHook-Allowed-Rate") {
			t.Errorf("send = %v; a refused update replaced the live subscription's rate", err)
		}
	})
}
