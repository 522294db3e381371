package tests_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/doctest"
)

// TestReadmeWalkthrough runs the README's walk-through the way a newcomer
// does: the broker started with the README's first command, then the
// walk-through's shell block pasted into one bash, and once the event has
// been delivered, the clean-up block into the same bash. The only change to
// the text is the two loopback ports (5888 and 8080 may be taken on a shared
// machine): the broker's becomes the one it picked, the subscriber's a free
// one.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	lockRepoBin(t)
	requireShell(t)
	readme := loadReadme(t)
	runBroker := readmeBrokerCommand(t, readme)
	if readmeCommand(readme.Section("# edgegrid")[0].Text, "go run ./scripts/test") == "" {
		t.Fatalf("README.md's first sh block should run every test (go run ./scripts/test)")
	}
	walk := readmeWalk(t, readme)

	// The broker, as the first command starts it, on a port it picks.
	brokerLog := filepath.Join(t.TempDir(), "broker.log")
	broker := doctest.StartGroup(t, doctest.Options{Dir: repoRoot(t), Output: brokerLog,
		Env: []string{"api__httpPort=0", "api__httpsPort=0"}}, "bash", "-c", runBroker)
	var brokerAddr string
	eventually(t, 5*time.Minute, func() error { // the first "go run" compiles the broker
		if broker.Exited() {
			t.Fatalf("the README's first command exited:\n%s", broker.Output())
		}
		brokerAddr = listeningAddr(broker.Output())
		if brokerAddr == "" {
			return errors.New("the broker is not listening yet")
		}
		return nil
	})
	base := "http://" + brokerAddr
	sinkAddr := doctest.FreeAddr(t)
	ports := strings.NewReplacer("127.0.0.1:5888", brokerAddr, "127.0.0.1:8080", sinkAddr)

	// The walk-through, pasted into a shell.
	shell := doctest.StartShell(t, doctest.Options{Dir: repoRoot(t), Output: filepath.Join(t.TempDir(), "shell.log")})
	failf := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\n--- shell\n%s\n--- broker\n%s", append(args, shell.Output(), broker.Output())...)
	}
	shell.Run(t, walk[0], ports, 3*time.Minute) // the walk-through builds the subscriber
	var delivery string
	eventually(t, time.Minute, func() error {
		delivery = outputLine(shell.Output(), "POST /api/events ")
		if delivery == "" {
			return errors.New("no delivery yet")
		}
		return nil
	})
	// Step 2 prints the subscription, step 4 lists it.
	if strings.Count(shell.Output(), `"name":"sampleSubscription1"`) < 2 {
		failf("steps 2 and 4 did not both print the subscription")
	}
	for _, want := range []string{"aeg-event-type=Notification", "aeg-subscription-name=sampleSubscription1",
		`"id":"1"`, `"topic":"sampleTopic1"`, `"data":{"temperature": 21.5}`} {
		if !strings.Contains(delivery, want) {
			failf("the subscriber's line lacks %s: %s", want, delivery)
		}
	}
	if !strings.Contains(shell.Output(), "smokesink: listening on "+sinkAddr) {
		failf("the subscriber did not say it was listening")
	}
	if f := doctest.Failures(shell.Output()); len(f) > 0 {
		failf("commands of the walk-through failed: %q", f)
	}
	// Delivered at the first attempt: a failed one would have sent the event
	// to the 1-minute back-off, which a user pasting the walk-through does not
	// wait for.
	for _, l := range strings.Split(broker.Output(), "\n") {
		if strings.Contains(l, `"level":"warn"`) && strings.Contains(l, `"subscription":"sampleSubscription1"`) {
			failf("a delivery attempt failed: %s", l)
		}
	}
	t.Logf("delivered: %s", delivery)

	// The clean-up block, in the same shell; then the shell ends.
	shell.Run(t, walk[1], ports, time.Minute)
	shell.Close(t, time.Minute)
	if code, _, body := do(t, nil, http.MethodGet, base+"/topics/sampleTopic1?"+apiVersion, "", nil); code != http.StatusNotFound {
		failf("after the clean-up, GET sampleTopic1 = %d %s, want 404", code, body)
	}
	doctest.WaitClosed(t, sinkAddr, 30*time.Second)
}

// repoBin is held by the tests whose shells build into the repository's
// bin/ folder, as the pages they follow do (the README's walk-through builds
// bin/smokesink, as do pages that start from it; pages build bin/edgegrid
// and write bin/desired.json): one at a time, so that none runs or replaces
// a file another is writing.
var repoBin sync.Mutex

func lockRepoBin(t *testing.T) {
	repoBin.Lock()
	t.Cleanup(repoBin.Unlock)
}

// requireShell skips (or under CI fails) a test that pastes blocks into a
// shell as a reader does, when the reader's tools are missing.
func requireShell(t *testing.T) {
	t.Helper()
	brokertest.RequireCommand(t, "bash", "your system's package manager (Debian: apt-get install bash)")
	brokertest.RequireCommand(t, "curl", "your system's package manager (Debian: apt-get install curl)")
}

// repoRoot is the repository's folder, where a reader runs the examples.
func repoRoot(t testing.TB) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func loadReadme(t testing.TB) *doctest.Page {
	return doctest.Load(t, filepath.Join(repoRoot(t), "README.md"))
}

// readmeBrokerCommand returns the README's command that runs the broker: the
// line of its first sh block that holds "go run ./module".
func readmeBrokerCommand(t testing.TB, readme *doctest.Page) string {
	t.Helper()
	top := readme.Section("# edgegrid")
	if len(top) == 0 {
		t.Fatal("README.md has no block under its title")
	}
	cmd := readmeCommand(top[0].Text, "go run ./module")
	if cmd == "" {
		t.Fatalf("README.md's first block should run the broker (go run ./module):\n%s", top[0].Text)
	}
	return cmd
}

// readmeWalk returns the walk-through's two sh blocks: the walk-through and
// its clean-up.
func readmeWalk(t testing.TB, readme *doctest.Page) []*doctest.Block {
	t.Helper()
	walk := readme.Section("## A walk-through with curl")
	if len(walk) != 2 || walk[0].Lang != "sh" || walk[1].Lang != "sh" {
		t.Fatalf("README.md's walk-through should have two sh blocks (the walk-through and its clean-up), found %d", len(walk))
	}
	for _, addr := range []string{"127.0.0.1:5888", "127.0.0.1:8080"} {
		if !strings.Contains(walk[0].Text, addr) {
			t.Fatalf("the walk-through no longer uses %s, which the tests replace with a free port:\n%s", addr, walk[0].Text)
		}
	}
	return walk
}

// readmeCommand returns the first line of block, not a comment, that
// contains s.
func readmeCommand(block, s string) string {
	for _, l := range strings.Split(block, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") && strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// listeningAddr returns the address of the broker's HTTP listener from its
// JSON log, or "".
func listeningAddr(log string) string {
	for _, l := range strings.Split(log, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["message"] == "listening" && m["scheme"] == "http" {
			addr, _ := m["addr"].(string)
			return addr
		}
	}
	return ""
}

// outputLine returns the first line of out that starts with prefix.
func outputLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
