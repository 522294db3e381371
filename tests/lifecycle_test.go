package tests_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestLifecycle_FailedStartClosesWhatStarted: when a listener cannot open,
// the broker exits with an error after closing, last first, what it had
// started: the delivery modes and the dead-letter writer among them.
func TestLifecycle_FailedStartClosesWhatStarted(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	code, out := runToExit(t, merge(devEnv(), "api__httpPort", port))
	if code == 0 {
		t.Fatalf("the broker exited 0 with its port taken:\n%s", out)
	}
	delivery := strings.Index(out, "delivery stopped; queued events are not persisted by design")
	failed := strings.Index(out, "edgegrid stopped with an error")
	if delivery < 0 || failed < delivery || !strings.Contains(out, "address already in use") {
		t.Fatalf("want the delivery engine closed, then the error naming the port:\n%s", out)
	}
}
