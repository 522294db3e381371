package edgehub_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/edgehub"
	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
	"github.com/edgegrid/edgegrid/pkg/testkit/sendertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// TestSenderContract runs the contract every sender keeps against a real
// mosquitto over TLS, reached through a loopback proxy that stops passing
// bytes on when the suite asks for a hung edgeHub. MQTT has no statuses:
// what fails is the connection or the PUBACK that never comes.
func TestSenderContract(t *testing.T) {
	ca := testpki.NewCA(t, "mqtt ca")
	sendertest.TestSender(t, sendertest.Features{}, func(t *testing.T) sendertest.Counterpart {
		b := mosquitto.Start(t, mosquitto.Options{CA: ca})
		sub := mosquitto.Subscribe(t, b, ca, "", "", mosquitto.ModuleMessages)
		stall := sendertest.NewStall(t, b.Addr())
		c := newClient(t, edgehub.Options{
			URL: "mqtts://" + stall.Addr(), DeviceID: "dev1", ModuleID: "eventgridmodule",
			TLSConfig:    func(context.Context) (*tls.Config, error) { return b.TLSConfig(ca), nil },
			MinReconnect: 50 * time.Millisecond, MaxReconnect: 200 * time.Millisecond,
		})
		return sendertest.Counterpart{
			Sender:       c,
			Subscription: batchOf("contract", false).Subscription,
			Received: func(tb testing.TB) [][]byte {
				var bodies [][]byte
				for _, m := range sub.Messages() {
					var evs []json.RawMessage
					if err := json.Unmarshal([]byte(m.Payload), &evs); err != nil {
						tb.Fatalf("message %q is not a JSON array: %v", m.Payload, err)
					}
					for _, ev := range evs {
						bodies = append(bodies, ev)
					}
				}
				return bodies
			},
			Hang: stall.Hang,
		}
	})
}
