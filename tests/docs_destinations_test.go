package tests_test

import (
	"errors"
	"strings"
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
	readme := loadReadme(t)
	walk := readmeWalk(t, readme)
	b := startBroker(t, merge(readmeBrokerEnv(t, readme), "api__httpPort", "0", "api__httpsPort", "0"))
	// The page's programs listen on 8081 and 8082, the README's subscriber
	// on 8080: each gets a free port.
	s := startDocShell(t, "127.0.0.1:5888", strings.TrimPrefix(b.URL, "http://"), "127.0.0.1:8080", doctest.FreeAddr(t),
		"127.0.0.1:8081", doctest.FreeAddr(t), "127.0.0.1:8082", doctest.FreeAddr(t))
	s.run(walk[0], 3*time.Minute, nil, `"name":"sampleSubscription1"`)

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
			`"code":"InvalidDestination"`, "properties.destination.properties.endpointUrl host ")
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
			`"code":"InvalidDestination"`, "properties.destination.properties.connectionString has an Endpoint that is not")
	})
	t.Run("StorageQueuePlaceholders", func(t *testing.T) {
		s := s.in(t)
		s.run(p.Claim(t, "## StorageQueue", "sh")[0], time.Minute, []string{"InvalidDestination"},
			`"code":"InvalidDestination"`, "properties.destination.properties.connectionString has an AccountKey that is not base64")
	})
	if t.Failed() {
		return
	}
	s.run(walk[1], time.Minute, nil)
}

// readmeBrokerEnv returns the settings the README's first command gives the
// broker: the NAME=value words before "go run ./module".
func readmeBrokerEnv(t testing.TB, readme *doctest.Page) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, w := range strings.Fields(readmeBrokerCommand(t, readme)) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			break
		}
		env[k] = v
	}
	if len(env) == 0 {
		t.Fatal("the README's first command sets no settings")
	}
	return env
}

// in returns the shell for a subtest: failures are reported there.
func (s *docShell) in(t *testing.T) *docShell {
	c := *s
	c.t = t
	return &c
}

// replace adds replacements of the page's text (old, new pairs) before the
// shell's own.
func (s *docShell) replace(pairs ...string) {
	s.ports = strings.NewReplacer(append(pairs, s.pairs...)...)
}

// waitFor waits until the shell has printed want: what a background program
// of the page prints.
func (s *docShell) waitFor(want string) {
	s.t.Helper()
	eventually(s.t, time.Minute, func() error {
		if !strings.Contains(s.Output(), want) {
			return errors.New("the shell has not printed " + want + " yet")
		}
		return nil
	})
}
