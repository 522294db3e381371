package tests_test

import (
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/doctest"
	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
)

// runDestinationsPage runs docs/destinations.md in the shell of the README's
// walk-through, as the page says: the README's broker and walk-through
// first, then the page's blocks in order, then the README's clean-up. The
// Go programs are saved where the page says, built and run; the EdgeHub
// try-out runs against a real mosquitto; the cloud examples are pasted as
// they are and must be refused, naming the placeholder's field.
func runDestinationsPage(t *testing.T, p *doctest.Page) {
	s, walk := startReadmeShell(t), readmeWalk(t, loadReadme(t))

	t.Run("CloudEventsReceiver", func(t *testing.T) {
		s := s.in(t)
		program := p.Claim(t, "### Receiving with a CloudEvents SDK", "go")[0]
		blocks := p.Claim(t, "### Receiving with a CloudEvents SDK", "sh")
		s.write(program, "/tmp/cereceiver.go")
		s.run(blocks[0], 3*time.Minute, nil, `"name":"ceReceiver"`)
		s.waitFor("recordInserted 2 from sampleTopic1: {\"temperature\": 22}")
		s.run(blocks[1], time.Minute, nil)
	})
	t.Run("SignedWebhook", func(t *testing.T) {
		s := s.in(t)
		program := p.Claim(t, "### The EventGrid handshake and signatures", "go")[0]
		blocks := p.Claim(t, "### The EventGrid handshake and signatures", "sh")
		s.write(program, "/tmp/hook.go")
		s.run(blocks[0], 3*time.Minute, nil, `"name":"signed"`)
		s.waitFor(`verified msg_`)
		s.waitFor(`"id":"3"`)
		s.run(blocks[1], time.Minute, nil)
	})
	t.Run("EventGridPlaceholders", func(t *testing.T) {
		s := s.in(t)
		s.run(p.Claim(t, "## EventGrid", "sh")[0], time.Minute, []string{"InvalidDestination"},
			`"code":"InvalidDestination"`, "properties.destination.properties.endpointUrl holds the placeholder <topic>: replace every placeholder with your own value.")
	})
	t.Run("EdgeHubWithMosquitto", func(t *testing.T) {
		brokertest.RequireCommand(t, "mosquitto", mosquitto.Install)
		s := s.in(t)
		mq, edge := doctest.FreeAddr(t), doctest.FreeAddr(t)
		s.replace("-p 1883", "-p "+port(mq), "127.0.0.1:1883", mq,
			"api__httpPort=5889", "api__httpPort="+port(edge), "127.0.0.1:5889", edge)
		s.run(p.Claim(t, "## EdgeHub", "sh")[0], 2*time.Minute, nil,
			`eventgrid_subscription_delivery_success_total{subscription="toCloud",topic="sampleTopic1"} 1`)
		doctest.WaitClosed(t, edge, 30*time.Second)
	})
	t.Run("ServiceBusPlaceholders", func(t *testing.T) {
		s := s.in(t)
		s.run(p.Claim(t, "## EventHub, ServiceBusQueue, ServiceBusTopic", "sh")[0], time.Minute, []string{"InvalidDestination"},
			`"code":"InvalidDestination"`, "properties.destination.properties.connectionString holds the placeholder <namespace>: replace every placeholder with your own value.")
	})
	t.Run("StorageQueuePlaceholders", func(t *testing.T) {
		s := s.in(t)
		s.run(p.Claim(t, "## StorageQueue", "sh")[0], time.Minute, []string{"InvalidDestination"},
			`"code":"InvalidDestination"`, "properties.destination.properties.connectionString holds the placeholder <account>: replace every placeholder with your own value.")
	})
	if t.Failed() {
		return
	}
	s.run(walk[1], time.Minute, nil)
}
