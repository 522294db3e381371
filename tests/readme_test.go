package tests_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// TestReadmeWalkthrough runs the README's walk-through the way a newcomer
// does: the broker started with the README's first command, then the
// walk-through's shell block pasted into one bash, and once the event has
// been delivered, the clean-up block into the same bash. The only change to
// the text is the two loopback ports (5888 and 8080 may be taken on a shared
// machine): the broker's becomes the one it picked, the subscriber's a free
// one.
func TestReadmeWalkthrough(t *testing.T) {
	// The walk-through needs them as a reader's shell has them.
	brokertest.RequireCommand(t, "bash", "your system's package manager (Debian: apt-get install bash)")
	brokertest.RequireCommand(t, "curl", "your system's package manager (Debian: apt-get install curl)")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)

	// The README's first lines: the command that runs the broker and the one
	// that runs every test.
	top := readmeShellBlocks(text, "")
	if len(top) == 0 {
		t.Fatal("README.md has no sh block")
	}
	runBroker := readmeCommand(top[0], "go run ./module")
	if runBroker == "" || readmeCommand(top[0], "go run ./scripts/test") == "" {
		t.Fatalf("README.md's first sh block should run the broker (go run ./module) and every test (go run ./scripts/test):\n%s", top[0])
	}
	walk := readmeShellBlocks(text, "## A walk-through with curl")
	if len(walk) < 2 {
		t.Fatalf("README.md's walk-through should have two sh blocks (the walk-through and its clean-up), found %d", len(walk))
	}
	for _, addr := range []string{"127.0.0.1:5888", "127.0.0.1:8080"} {
		if !strings.Contains(walk[0], addr) {
			t.Fatalf("the walk-through no longer uses %s, which this test replaces with a free port:\n%s", addr, walk[0])
		}
	}

	// The broker, as the first command starts it, on a port it picks.
	brokerLog := filepath.Join(t.TempDir(), "broker.log")
	broker := startReadmeGroup(t, root, brokerLog, []string{"api__httpPort=0", "api__httpsPort=0"}, "bash", "-c", runBroker)
	var brokerAddr string
	eventually(t, 5*time.Minute, func() error { // the first "go run" compiles the broker
		if broker.exited() {
			t.Fatalf("the README's first command exited:\n%s", readmeFile(brokerLog))
		}
		brokerAddr = readmeListeningAddr(brokerLog)
		if brokerAddr == "" {
			return errors.New("the broker is not listening yet")
		}
		return nil
	})
	base := "http://" + brokerAddr
	sinkAddr := readmeFreeAddr(t)
	ports := strings.NewReplacer("127.0.0.1:5888", brokerAddr, "127.0.0.1:8080", sinkAddr)

	// The walk-through, pasted into a shell.
	shellLog := filepath.Join(t.TempDir(), "shell.log")
	shell := startReadmeGroup(t, root, shellLog, nil, "bash")
	shell.paste(t, ports.Replace(walk[0]))
	failf := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\n--- shell\n%s\n--- broker\n%s", append(args, readmeFile(shellLog), readmeFile(brokerLog))...)
	}
	var delivery string
	eventually(t, 3*time.Minute, func() error { // the walk-through builds the subscriber
		if shell.exited() {
			failf("the shell exited during the walk-through")
		}
		delivery = readmeLine(shellLog, "POST /api/events ")
		// Step 2 prints the subscription, step 4 lists it.
		if delivery == "" || strings.Count(readmeFile(shellLog), `"name":"sampleSubscription1"`) < 2 {
			return errors.New("no delivery yet, or step 4 not done")
		}
		return nil
	})
	for _, want := range []string{"aeg-event-type=Notification", "aeg-subscription-name=sampleSubscription1",
		`"id":"1"`, `"topic":"sampleTopic1"`, `"data":{"temperature": 21.5}`} {
		if !strings.Contains(delivery, want) {
			failf("the subscriber's line lacks %s: %s", want, delivery)
		}
	}
	if !strings.Contains(readmeFile(shellLog), "smokesink: listening on "+sinkAddr) {
		failf("the subscriber did not say it was listening")
	}
	// Delivered at the first attempt: a failed one would have sent the event
	// to the 1-minute back-off, which a user pasting the walk-through does not
	// wait for.
	for _, l := range strings.Split(readmeFile(brokerLog), "\n") {
		if strings.Contains(l, `"level":"warn"`) && strings.Contains(l, `"subscription":"sampleSubscription1"`) {
			failf("a delivery attempt failed: %s", l)
		}
	}
	t.Logf("delivered: %s", delivery)

	// The clean-up block, in the same shell; then the shell ends.
	shell.paste(t, ports.Replace(walk[1]))
	shell.closeInput()
	eventually(t, time.Minute, func() error {
		if !shell.exited() {
			return errors.New("the shell is still running")
		}
		return nil
	})
	if code, _, body := do(t, nil, http.MethodGet, base+"/topics/sampleTopic1?"+apiVersion, "", nil); code != http.StatusNotFound {
		failf("after the clean-up, GET sampleTopic1 = %d %s, want 404", code, body)
	}
	eventually(t, 30*time.Second, func() error {
		c, err := net.DialTimeout("tcp", sinkAddr, time.Second)
		if err != nil {
			return nil
		}
		c.Close()
		return errors.New("the subscriber still listens after the clean-up's kill")
	})
}

// readmeShellBlocks returns the bodies of the ```sh blocks of a Markdown
// text that follow the line heading (from the start when heading is empty),
// up to the next heading of the same level.
func readmeShellBlocks(text, heading string) []string {
	lines := strings.Split(text, "\n")
	i := 0
	level := ""
	if heading != "" {
		for i < len(lines) && strings.TrimSpace(lines[i]) != heading {
			i++
		}
		if i == len(lines) {
			return nil
		}
		level = heading[:strings.IndexByte(heading, ' ')+1]
		i++
	}
	var blocks []string
	var cur []string
	in := false
	for ; i < len(lines); i++ {
		l := lines[i]
		switch {
		case !in && level != "" && strings.HasPrefix(l, level):
			return blocks
		case !in && strings.TrimSpace(l) == "```sh":
			in, cur = true, nil
		case in && strings.TrimSpace(l) == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
		case in:
			cur = append(cur, l)
		}
	}
	return blocks
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

// readmeGroup is a process started in a process group of its own, so that
// what it starts in the background (go run's child, the subscriber) is
// stopped with it.
type readmeGroup struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
}

// startReadmeGroup starts name with args in dir, with the test's
// environment plus env, its output going to the file out. It is stopped
// when the test ends.
func startReadmeGroup(t *testing.T, dir, out string, env []string, name string, args ...string) *readmeGroup {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	g := &readmeGroup{cmd: exec.Command(name, args...), done: make(chan struct{})}
	g.cmd.Dir = dir
	g.cmd.Env = append(os.Environ(), env...)
	g.cmd.Stdout, g.cmd.Stderr = f, f
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if g.stdin, err = g.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.cmd.Wait(); close(g.done) }()
	t.Cleanup(g.stop)
	return g
}

func (g *readmeGroup) paste(t *testing.T, text string) {
	t.Helper()
	if _, err := io.WriteString(g.stdin, text); err != nil {
		t.Fatal(err)
	}
}

func (g *readmeGroup) closeInput() { g.stdin.Close() }

func (g *readmeGroup) exited() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the whole group (the leader may have exited while
// its background children live on), and SIGKILL if it lingers.
func (g *readmeGroup) stop() {
	g.stdin.Close()
	pgid := g.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(-pgid, 0) != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-g.done
}

// readmeListeningAddr returns the address of the broker's HTTP listener
// from its JSON log, or "".
func readmeListeningAddr(logFile string) string {
	f, err := os.Open(logFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["message"] == "listening" && m["scheme"] == "http" {
			addr, _ := m["addr"].(string)
			return addr
		}
	}
	return ""
}

// readmeLine returns the first line of the file that starts with prefix.
func readmeLine(file, prefix string) string {
	for _, l := range strings.Split(readmeFile(file), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func readmeFile(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

// readmeFreeAddr returns a loopback address no one listens on now.
func readmeFreeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr())
}
