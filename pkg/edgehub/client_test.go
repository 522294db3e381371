package edgehub_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/edgehub"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
	"github.com/edgegrid/edgegrid/pkg/workload"
)

// These tests publish to a real mosquitto, which stands in for edgeHub (an
// MQTT 3.1.1 broker too), over TLS with a CA made in the test.

func batchOf(output string, batching bool, bodies ...string) *push.Batch {
	d := eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: output}
	if batching {
		d.MaxEventsPerBatch = 10
	}
	b := &push.Batch{Subscription: &eventgrid.EventSubscription{Topic: "t", Name: "s", Destination: d}}
	for _, s := range bodies {
		b.Bodies = append(b.Bodies, []byte(s))
	}
	return b
}

func newClient(t *testing.T, o edgehub.Options) *edgehub.Client {
	t.Helper()
	c, err := edgehub.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func sendCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestSendThroughBroker(t *testing.T) {
	ca := testpki.NewCA(t, "mqtt ca")
	b := mosquitto.Start(t, mosquitto.Options{CA: ca, Persistence: true})
	sub := mosquitto.Subscribe(t, b, ca, "", "", mosquitto.ModuleMessages)
	c := newClient(t, edgehub.Options{
		URL: b.URL(), DeviceID: "dev1", ModuleID: "eventgridmodule",
		TLSConfig:    func(context.Context) (*tls.Config, error) { return b.TLSConfig(ca), nil },
		MinReconnect: 50 * time.Millisecond, MaxReconnect: 200 * time.Millisecond,
	})

	const e1, e2 = `{"id":"1","data":{"n":1}}`, `{"id":"2","data":{"n":2}}`
	if err := c.Send(sendCtx(t, 10*time.Second), batchOf("sampleSub4", true, e1, e2)); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m := sub.WaitFor(t, "["+e1+","+e2+"]")
	const wantTopic = "devices/dev1/modules/eventgridmodule/messages/events/%24.on=sampleSub4&%24.ct=application%2Fjson&%24.ce=utf-8/"
	if m.Topic != wantTopic || m.QoS != 1 {
		t.Fatalf("topic %s qos %d; want %s at QoS 1", m.Topic, m.QoS, wantTopic)
	}
	if !strings.Contains(b.Log(), "as dev1/eventgridmodule") {
		t.Fatalf("client id dev1/eventgridmodule not in the broker's log:\n%s", b.Log())
	}

	t.Run("broker restart loses nothing", func(t *testing.T) {
		send := func(ev string) {
			brokertest.Eventually(t, 20*time.Second, func() error {
				return c.Send(sendCtx(t, 2*time.Second), batchOf("out2", false, ev))
			})
		}
		send(`{"id":"r1"}`)
		b.Stop()
		// With the broker away, a send fails within its context: the
		// engine keeps the event in its retry schedule.
		err := c.Send(sendCtx(t, 500*time.Millisecond), batchOf("out2", false, `{"id":"r2"}`))
		if err == nil {
			t.Fatal("Send succeeded with the broker stopped")
		}
		if strings.Contains(err.Error(), "password") {
			t.Fatalf("error text %q", err)
		}
		b.Restart()
		send(`{"id":"r2"}`)
		send(`{"id":"r3"}`)
		for _, ev := range []string{`{"id":"r1"}`, `{"id":"r2"}`, `{"id":"r3"}`} {
			sub.WaitFor(t, "["+ev+"]")
		}
	})

	t.Run("closed", func(t *testing.T) {
		_ = c.Close(context.Background())
		if err := c.Send(sendCtx(t, time.Second), batchOf("o", false, `{}`)); !errors.Is(err, edgehub.ErrClosed) {
			t.Fatalf("got %v", err)
		}
	})
}

// TestIoTEdgeIdentity runs the IoT Edge path: the identity from the runtime,
// the password a SAS token signed by the workload API (the stand-in, as the
// real security daemon cannot run here), edgeHub's certificate checked
// against the workload trust bundle, and the broker's password file
// checking the user name and the token.
func TestIoTEdgeIdentity(t *testing.T) {
	ca := testpki.NewCA(t, "edge root")
	ws := testpki.NewWorkloadServer(t, ca)
	wl, err := workload.New(ws.URI(), testpki.WorkloadAPIVersion, testpki.WorkloadModuleID, testpki.WorkloadGenerationID)
	if err != nil {
		t.Fatal(err)
	}
	// A fixed clock makes the token, and so the password file, known in
	// advance.
	now := time.Unix(1893456000, 0)
	const lifetime = 2 * time.Second
	se := fmt.Sprint(now.Add(lifetime).Unix())
	user := testpki.WorkloadHubName + "/" + testpki.WorkloadDeviceID + "/" + testpki.WorkloadModuleID + "/?api-version=2018-06-30"
	token := expectedToken("testhub.azure-devices.net%2Fdevices%2Fedgedevice%2Fmodules%2Feventgridmodule", se)
	b := mosquitto.Start(t, mosquitto.Options{CA: ca, Users: map[string]string{user: token, "checker": "checker-pw"}})
	sub := mosquitto.Subscribe(t, b, ca, "checker", "checker-pw", mosquitto.ModuleMessages)

	c := newClient(t, edgehub.Options{
		URL:      b.URL(),
		DeviceID: testpki.WorkloadDeviceID, ModuleID: testpki.WorkloadModuleID, HubHostName: testpki.WorkloadHubName,
		Username: user, Signer: wl,
		TLSConfig:     edgehub.TrustBundleTLS(wl, "127.0.0.1"),
		TokenLifetime: lifetime, Now: func() time.Time { return now },
		MinReconnect: 50 * time.Millisecond, MaxReconnect: 200 * time.Millisecond,
	})
	if err := c.Send(sendCtx(t, 10*time.Second), batchOf("alerts", false, `{"id":"e1"}`)); err != nil {
		t.Fatalf("Send: %v\n%s", err, b.Log())
	}
	m := sub.WaitFor(t, `[{"id":"e1"}]`)
	if !strings.HasPrefix(m.Topic, "devices/edgedevice/modules/eventgridmodule/messages/events/%24.on=alerts&") {
		t.Fatalf("topic %s", m.Topic)
	}
	log := b.Log()
	if !strings.Contains(log, "as edgedevice/eventgridmodule") || !strings.Contains(log, "u'"+user+"'") {
		t.Fatalf("client id or user name not as expected in the broker's log:\n%s", log)
	}

	t.Run("token renewed by reconnecting", func(t *testing.T) {
		brokertest.Eventually(t, 10*time.Second, func() error {
			if n := ws.Calls(testpki.EndpointSign); n < 3 {
				return fmt.Errorf("%d sign calls", n)
			}
			return nil
		})
		brokertest.Eventually(t, 10*time.Second, func() error {
			return c.Send(sendCtx(t, 2*time.Second), batchOf("alerts", false, `{"id":"e2"}`))
		})
		sub.WaitFor(t, `[{"id":"e2"}]`)
	})

	t.Run("wrong password refused", func(t *testing.T) {
		bad := newClient(t, edgehub.Options{
			URL: b.URL(), DeviceID: testpki.WorkloadDeviceID, ModuleID: testpki.WorkloadModuleID,
			ClientID: "intruder", Username: user, Password: "SharedAccessSignature sr=x&sig=y&se=1",
			TLSConfig: edgehub.TrustBundleTLS(wl, "127.0.0.1"),
		})
		err := bad.Send(sendCtx(t, 5*time.Second), batchOf("alerts", false, `{"id":"x"}`))
		if err == nil {
			t.Fatal("a wrong password was accepted")
		}
		if strings.Contains(err.Error(), "sig=y") {
			t.Fatalf("error text shows the password: %v", err)
		}
	})
}
