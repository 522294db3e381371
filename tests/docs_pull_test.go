package tests_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/doctest"
)

// runPullDeliveryPage runs "Trying it locally" of docs/pull-delivery.md: the
// broker built and started, the topic and queue subscription created, the
// curl block's publishes, receive and settlements (one token each), the Go
// SDK program saved and run against the same broker, and the broker
// stopped by its process id.
func runPullDeliveryPage(t *testing.T, p *doctest.Page) {
	s := startDocShell(t)
	setup := p.Claim(t, "## Trying it locally", "sh")
	curl := p.Claim(t, "### With curl", "sh")
	program := p.Claim(t, "### With the Azure SDK for Go", "go")
	runIt := p.Claim(t, "### With the Azure SDK for Go", "sh")
	stop := p.Claim(t, "### Stopping the broker", "sh")

	// Building the broker may take a while on a cold build cache.
	s.run(setup[0], 5*time.Minute, nil, `"name":"orders"`, `"name":"app1"`, `"deliveryMode":"Queue"`)

	out := s.run(curl[0], time.Minute, nil, "eventgrid_subscription_delivery_attempts_total")
	if n := strings.Count(out, `"lockToken":"`); n != 4 {
		t.Fatalf("the receive handed out %d events, want the 4 published:\n%s", n, out)
	}
	if n := strings.Count(out, `"failedLockTokens":[]`); n != 4 {
		t.Fatalf("%d of the 4 settlements succeeded for every token:\n%s", n, out)
	}
	if !strings.Contains(out, `eventgrid_queue_settled_total{kind="acknowledge",subscription="app1",topic="orders"} 2`) {
		t.Fatalf("the metrics do not count the 2 acknowledgements:\n%s", out)
	}

	if !strings.Contains(runIt[0].Text, "go run /tmp/pull.go") {
		t.Fatalf("the SDK example is no longer run as /tmp/pull.go:\n%s", runIt[0].Text)
	}
	s.write(program[0], "/tmp/pull.go")
	// go run compiles the SDK the first time.
	s.run(runIt[0], 5*time.Minute, nil, "acknowledged ")

	s.run(stop[0], time.Minute, nil)
	doctest.WaitClosed(t, s.ports.Replace("127.0.0.1:4438"), 30*time.Second)
}
