package servicebus_test

import (
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/servicebus"
	"github.com/edgegrid/edgegrid/pkg/servicebus/servicebustest"
	"github.com/edgegrid/edgegrid/pkg/testkit/sendertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// TestSenderContract runs the contract every sender keeps against
// servicebustest.Namespace, for each of the three entity kinds, batching
// (one request per batch) and not (one request per event).
func TestSenderContract(t *testing.T) {
	ca := testpki.NewCA(t, "sb-ca")
	s := newSender(t, ca)
	for _, kind := range []struct {
		typ    eventgrid.EndpointType
		entity string
	}{
		{eventgrid.EventHub, servicebustest.EventHub},
		{eventgrid.ServiceBusQueue, servicebustest.Queue},
		{eventgrid.ServiceBusTopic, servicebustest.Topic},
	} {
		for _, batching := range []bool{false, true} {
			name := string(kind.typ)
			if batching {
				name += "/Batching"
			}
			t.Run(name, func(t *testing.T) {
				sendertest.TestSender(t, sendertest.Features{Statuses: true, RetryAfter: true}, func(t *testing.T) sendertest.Counterpart {
					return namespaceCounterpart(t, s, ca, kind.typ, kind.entity, batching)
				})
			})
		}
	}
}

func namespaceCounterpart(t *testing.T, s *servicebus.Sender, ca *testpki.CA, typ eventgrid.EndpointType, kind string, batching bool) sendertest.Counterpart {
	ns := servicebustest.New(t, ca)
	cs := ns.AddEntity(kind, "entity")
	return sendertest.Counterpart{
		Sender:       s,
		Subscription: batch(typ, cs, batching, nil).Subscription,
		Received: func(testing.TB) [][]byte {
			var bodies [][]byte
			for _, m := range ns.Messages("entity") {
				bodies = append(bodies, m.Body)
			}
			return bodies
		},
		Fail: ns.Fail,
		Hang: ns.Hang,
	}
}
