package servicebus_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/servicebus"
	"github.com/edgegrid/edgegrid/pkg/servicebus/servicebustest"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// No Event Hubs or Service Bus emulator runs here: these tests send to
// servicebustest.Namespace, which implements the REST send APIs with the
// services' checks, over real TLS on a loopback port.

func newSender(t *testing.T, ca *testpki.CA) *servicebus.Sender {
	return servicebus.New(servicebus.Options{TLSConfig: &tls.Config{RootCAs: ca.Pool()}, UserAgent: "edgegrid/test"})
}

func batch(typ eventgrid.EndpointType, connStr string, batching bool, attrs []eventgrid.DeliveryAttribute, bodies ...string) *push.Batch {
	d := eventgrid.Destination{EndpointType: typ, ConnectionString: connStr, DeliveryAttributes: attrs}
	if batching {
		d.MaxEventsPerBatch = 10
	}
	b := &push.Batch{Subscription: &eventgrid.EventSubscription{Topic: "t", Name: "s", Destination: d}}
	for _, s := range bodies {
		b.Bodies = append(b.Bodies, []byte(s))
	}
	return b
}

const (
	ev1 = `{"id":"1","subject":"a","data":{"deviceId":"dev-1","temp":21.5,"ok":true,"nested":{"x":1}}}`
	ev2 = `{"id":"2","subject":"b\n\"quoted\"","data":{"deviceId":"dev-2","temp":-3}}`
	ev3 = `{"id":"3","subject":"c","data":{}}`
)

var attrs = []eventgrid.DeliveryAttribute{
	{Name: "source", Type: "Static", Value: "edge \"gateway\" 1"},
	{Name: "deviceId", Type: "Dynamic", SourceField: "data.deviceId"},
	{Name: "temp", Type: "Dynamic", SourceField: "data.temp"},
	{Name: "ok", Type: "Dynamic", SourceField: "data.ok"},
	{Name: "nested", Type: "Dynamic", SourceField: "data.nested"},
}

func TestSend(t *testing.T) {
	ca := testpki.NewCA(t, "sb-ca")
	ns := servicebustest.New(t, ca)
	s := newSender(t, ca)
	ctx := context.Background()

	for _, kind := range []struct {
		typ    eventgrid.EndpointType
		entity string
	}{
		{eventgrid.EventHub, servicebustest.EventHub},
		{eventgrid.ServiceBusQueue, servicebustest.Queue},
		{eventgrid.ServiceBusTopic, servicebustest.Topic},
	} {
		t.Run(string(kind.typ), func(t *testing.T) {
			single := strings.ToLower(string(kind.typ)) + "-single"
			cs := ns.AddEntity(kind.entity, single)
			if err := s.Send(ctx, batch(kind.typ, cs, false, nil, ev1)); err != nil {
				t.Fatalf("single send: %v (refused: %q)", err, ns.Refused())
			}
			msgs := ns.Messages(single)
			if len(msgs) != 1 || string(msgs[0].Body) != ev1 || msgs[0].Batched || msgs[0].UserProperties != nil {
				t.Fatalf("single send: got %+v", msgs)
			}

			batched := strings.ToLower(string(kind.typ)) + "-batch"
			cs = ns.AddEntity(kind.entity, batched)
			if err := s.Send(ctx, batch(kind.typ, cs, true, attrs, ev1, ev2, ev3)); err != nil {
				t.Fatalf("batch send: %v (refused: %q)", err, ns.Refused())
			}
			msgs = ns.Messages(batched)
			if len(msgs) != 3 {
				t.Fatalf("batch send: got %d messages, want 3", len(msgs))
			}
			want := []map[string]any{
				{"source": `edge "gateway" 1`, "deviceId": "dev-1", "temp": 21.5, "ok": true},
				{"source": `edge "gateway" 1`, "deviceId": "dev-2", "temp": -3.0},
				{"source": `edge "gateway" 1`},
			}
			for i, body := range []string{ev1, ev2, ev3} {
				m := msgs[i]
				if string(m.Body) != body || !m.Batched {
					t.Errorf("message %d: body %s, batched %v; want %s", i, m.Body, m.Batched, body)
				}
				if !equalProps(m.UserProperties, want[i]) {
					t.Errorf("message %d: properties %v, want %v", i, m.UserProperties, want[i])
				}
			}
		})
	}

	t.Run("properties without batching", func(t *testing.T) {
		cs := ns.AddEntity(servicebustest.Queue, "props-single")
		if err := s.Send(ctx, batch(eventgrid.ServiceBusQueue, cs, false, attrs[:2], ev2)); err != nil {
			t.Fatal(err)
		}
		msgs := ns.Messages("props-single")
		if len(msgs) != 1 || string(msgs[0].Body) != ev2 || !equalProps(msgs[0].UserProperties, map[string]any{"source": `edge "gateway" 1`, "deviceId": "dev-2"}) {
			t.Fatalf("got %+v", msgs)
		}
	})
}

// Message properties follow the rules every destination shares: a value a
// header could not carry (here a subject with a line break) is left out.
func TestSend_PropertiesSharedRules(t *testing.T) {
	ca := testpki.NewCA(t, "sb-ca")
	ns := servicebustest.New(t, ca)
	s := newSender(t, ca)
	cs := ns.AddEntity(servicebustest.Queue, "strict")
	subject := []eventgrid.DeliveryAttribute{{Name: "subject", Type: "Dynamic", SourceField: "subject"}}
	if err := s.Send(context.Background(), batch(eventgrid.ServiceBusQueue, cs, true, subject, ev1, ev2)); err != nil {
		t.Fatal(err)
	}
	msgs := ns.Messages("strict")
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	if !equalProps(msgs[0].UserProperties, map[string]any{"subject": "a"}) || len(msgs[1].UserProperties) != 0 {
		t.Errorf("properties %v and %v; want subject a, then none (a multi-line subject)", msgs[0].UserProperties, msgs[1].UserProperties)
	}
	for i, m := range msgs {
		want := []eventgrid.Property{}
		if i == 0 {
			want = []eventgrid.Property{{Name: "subject", Value: "a"}}
		}
		if got := eventgrid.Properties(subject, m.Body); len(got) != len(want) || (len(got) == 1 && got[0] != want[0]) {
			t.Errorf("message %d: eventgrid.Properties = %v, want %v", i, got, want)
		}
	}
}

func equalProps(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func TestSendFailures(t *testing.T) {
	ca := testpki.NewCA(t, "sb-ca")
	ns := servicebustest.New(t, ca)
	s := newSender(t, ca)
	ctx := context.Background()
	ns.AddEntity(servicebustest.EventHub, "hub")

	t.Run("wrong key", func(t *testing.T) {
		bad := ns.ConnectionString("hub", "send", "d3Jvbmc=")
		err := s.Send(ctx, batch(eventgrid.EventHub, bad, false, nil, ev1))
		if r := push.Classify(err); r.Outcome != push.OutcomeUnauthorized {
			t.Fatalf("got %+v from %v", r, err)
		}
		checkNoSecret(t, err, bad)
		if refused := ns.Refused(); len(refused) == 0 || !strings.Contains(refused[len(refused)-1], "signature mismatch") {
			t.Fatalf("refusal reasons: %q", refused)
		}
	})
	t.Run("missing entity", func(t *testing.T) {
		other := ns.ConnectionString("nohub", "send", "a2V5")
		if r := push.Classify(s.Send(ctx, batch(eventgrid.EventHub, other, false, nil, ev1))); r.Outcome != push.OutcomeNotFound {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("malformed connection string", func(t *testing.T) {
		err := s.Send(ctx, batch(eventgrid.EventHub, "Endpoint=sb://x/;SharedAccessKeyName=a;SharedAccessKey=topsecret", false, nil, ev1))
		if err == nil || !strings.Contains(err.Error(), "EntityPath") {
			t.Fatalf("got %v", err)
		}
		checkNoSecret(t, err, "topsecret")
	})
	t.Run("connection refused", func(t *testing.T) {
		dead := "Endpoint=sb://127.0.0.1:1/;SharedAccessKeyName=a;SharedAccessKey=k;EntityPath=e"
		if r := push.Classify(s.Send(ctx, batch(eventgrid.EventHub, dead, false, nil, ev1))); r.Outcome != push.OutcomeSocketError {
			t.Fatalf("got %+v", r)
		}
	})
	// Each kind names itself in its errors, which deliveryStatus.lastError
	// and the logs show.
	t.Run("kind named", func(t *testing.T) {
		for typ, entity := range map[eventgrid.EndpointType]string{
			eventgrid.EventHub:        servicebustest.EventHub,
			eventgrid.ServiceBusQueue: servicebustest.Queue,
			eventgrid.ServiceBusTopic: servicebustest.Topic,
		} {
			cs := ns.AddEntity(entity, "named-"+entity)
			ns.Fail(http.StatusInternalServerError, "")
			want := strings.ToLower(string(typ)) + ": destination answered 500"
			if err := s.Send(ctx, batch(typ, cs, false, nil, ev1)); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s: error %v, want it to start %q", typ, err, want)
			}
		}
	})
}

func checkNoSecret(t *testing.T, err error, secret string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("error text %q shows the secret", err)
	}
}

func BenchmarkSendBatch(b *testing.B) {
	ca := testpki.NewCA(b, "sb-ca")
	ns := servicebustest.New(b, ca)
	s := servicebus.New(servicebus.Options{TLSConfig: &tls.Config{RootCAs: ca.Pool()}})
	cs := ns.AddEntity(servicebustest.Queue, "bench")
	bt := batch(eventgrid.ServiceBusQueue, cs, true, attrs, ev1, ev2, ev3, ev1, ev2, ev3, ev1, ev2, ev3, ev1)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Send(context.Background(), bt); err != nil {
			b.Fatal(err)
		}
	}
}

// TestClose_ClosesIdleConnections: after Close the namespace sees the
// connection of an earlier send closed, as the broker's shutdown does.
func TestClose_ClosesIdleConnections(t *testing.T) {
	ca := testpki.NewCA(t, "sb-ca")
	ns := servicebustest.New(t, ca)
	// The same namespace behind a server that tells when a connection ends.
	var closed atomic.Int32
	srv := httptest.NewUnstartedServer(ns)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed.Add(1)
		}
	}
	cert := ca.Issue(t, "127.0.0.1", nil, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(time.Hour))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ns.Host = srv.Listener.Addr().String()

	s := newSender(t, ca)
	cs := ns.AddEntity(servicebustest.Queue, "q")
	if err := s.Send(t.Context(), batch(eventgrid.ServiceBusQueue, cs, false, nil, ev1)); err != nil {
		t.Fatalf("send: %v (refused: %q)", err, ns.Refused())
	}
	if n := closed.Load(); n != 0 {
		t.Fatalf("%d connections closed before Close", n)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		if closed.Load() != 1 {
			return errors.New("the idle connection is still open")
		}
		return nil
	})
}
