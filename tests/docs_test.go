package tests_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/doctest"
)

// docPages runs the hands-on blocks of each page of docs/ that opts in: a
// page opts in with a function that runs its blocks (or with noBlocks when
// it has none, so that a block added later must be run too). Each page's
// shell, Go programs and brokers are its own.
var docPages = map[string]func(*testing.T, *doctest.Page){
	"api.md":           runAPIPage,
	"configuration.md": noBlocks,
	"console.md":       runConsolePage,
	"delivery.md":      noBlocks,
	"design.md":        noBlocks,
	"destinations.md":  runDestinationsPage,
	"live-config.md":   runLiveConfigPage,
	"metrics.md":       noBlocks,
	"performance.md":   noBlocks,
	"pull-delivery.md": runPullDeliveryPage,
	"security.md":      runSecurityPage,
}

// docPagesNotRun are the pages whose blocks no test here runs, and why.
var docPagesNotRun = map[string]string{
	"deployment.md": "its blocks build container images and run them under Docker",
	"kubernetes.md": "its install blocks need a Kubernetes cluster; tests/kubernetes runs its helm-less preview (TestDocsPreview) and installs the chart",
}

// TestDocs runs every hands-on block of docs/ the way a reader pastes it:
// shell blocks into one bash per page, in the repository's folder, and Go
// programs saved and run as the page says. A block meant to be shown but
// not run says so (see the doctest package). The only changes to the text
// are loopback ports, which the test replaces with free ones (the
// documented 4438 and 5888 may be taken on a shared machine), and /tmp
// paths, which go to the test's own temporary folder.
func TestDocs(t *testing.T) {
	t.Parallel()
	lockRepoBin(t)
	requireShell(t)
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pages in docs/: %v", err)
	}
	sort.Strings(files)
	for _, f := range files {
		name := filepath.Base(f)
		run, ok := docPages[name]
		if !ok {
			if why, ok := docPagesNotRun[name]; ok {
				t.Logf("docs/%s is not run: %s", name, why)
			} else {
				t.Errorf("docs/%s is new: add it to docPages with a function that runs its blocks", name)
			}
			continue
		}
		t.Run(name, func(t *testing.T) {
			p := doctest.Load(t, f)
			run(t, p)
			if !t.Failed() {
				p.Check(t)
			}
		})
	}
}

// noBlocks is the runner of a page without hands-on blocks: Check then
// fails for any it gains.
func noBlocks(*testing.T, *doctest.Page) {}

// docShell is a page's shell, with the replacements of its text.
type docShell struct {
	*doctest.Shell
	t     *testing.T
	ports *strings.Replacer
	pairs []string // ports' old, new pairs
}

// startDocShell starts a bash in the repository's folder whose brokers
// listen on free ports: the page's 127.0.0.1:4438 and :5888 become those,
// /tmp/ the test's temporary folder. pairs (old, new) replace text before
// those.
func startDocShell(t *testing.T, pairs ...string) *docShell {
	t.Helper()
	tmp := t.TempDir()
	https, http := doctest.FreeAddr(t), doctest.FreeAddr(t)
	env := []string{"api__httpsPort=" + port(https), "api__httpPort=" + port(http)}
	s := &docShell{t: t, pairs: append(pairs, "127.0.0.1:4438", https, "127.0.0.1:5888", http, "/tmp/", tmp+"/")}
	s.Shell = doctest.StartShell(t, doctest.Options{Dir: repoRoot(t), Env: env, Output: filepath.Join(tmp, "shell.log")})
	s.ports = strings.NewReplacer(s.pairs...)
	return s
}

func port(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

// run pastes b and checks what it printed: no failed command, no curl
// error, no error envelope unless its details.code is among allowed, and
// every want.
func (s *docShell) run(b *doctest.Block, timeout time.Duration, allowed []string, want ...string) string {
	s.t.Helper()
	out := s.Run(s.t, b, s.ports, timeout)
	s.check(b.Where(), out, allowed, want...)
	return out
}

func (s *docShell) check(where, out string, allowed []string, want ...string) {
	s.t.Helper()
	var bad []string
	bad = append(bad, doctest.Failures(out)...)
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, `{"error":{"code":`); i >= 0 && !envelopeAllowed(l[i:], allowed) {
			bad = append(bad, l)
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			bad = append(bad, "missing: "+w)
		}
	}
	if len(bad) > 0 {
		s.t.Fatalf("%s:\n  %s\n--- what the block printed\n%s\n--- the whole shell\n%s", where, strings.Join(bad, "\n  "), out, s.Output())
	}
}

func envelopeAllowed(l string, allowed []string) bool {
	for _, a := range allowed {
		if strings.Contains(l, `"details":{"code":"`+a+`"`) {
			return true
		}
	}
	return false
}

// write saves a Go block where the page says to save it, after the port
// replacements.
func (s *docShell) write(b *doctest.Block, path string) {
	s.t.Helper()
	if err := os.WriteFile(s.ports.Replace(path), []byte(s.ports.Replace(b.Text)), 0o644); err != nil {
		s.t.Fatal(err)
	}
	b.MarkRun()
}

// startReadmeShell starts the README's broker (the test's binary with the
// settings of the README's first command) and a shell in which the
// README's walk-through has run: the state the pages that build on it
// start from. The README's subscriber gets a free port, and so do the
// programs on 8081 and 8082.
func startReadmeShell(t *testing.T) *docShell {
	t.Helper()
	readme := loadReadme(t)
	b := startBroker(t, merge(readmeBrokerEnv(t, readme), "api__httpPort", "0", "api__httpsPort", "0"))
	s := startDocShell(t, "127.0.0.1:5888", strings.TrimPrefix(b.URL, "http://"), "127.0.0.1:8080", doctest.FreeAddr(t),
		"127.0.0.1:8081", doctest.FreeAddr(t), "127.0.0.1:8082", doctest.FreeAddr(t))
	s.run(readmeWalk(t, readme)[0], 3*time.Minute, nil, `"name":"sampleSubscription1"`)
	return s
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
