package tests_test

import (
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
	"api.md":           noBlocks,
	"configuration.md": noBlocks,
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
	"console.md":    "its inspection API is still being built; the console's tests will opt the page in",
	"deployment.md": "its blocks build container images and run them under Docker",
	"kubernetes.md": "its blocks need a Kubernetes cluster; tests/kubernetes installs and renders the chart",
}

// TestDocs runs every hands-on block of docs/ the way a reader pastes it:
// shell blocks into one bash per page, in the repository's folder, and Go
// programs saved and run as the page says. A block meant to be shown but
// not run says so (see the doctest package). The only changes to the text
// are loopback ports, which the test replaces with free ones (the
// documented 4438 and 5888 may be taken on a shared machine), and /tmp
// paths, which go to the test's own temporary folder.
func TestDocs(t *testing.T) {
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

// runSecurityPage runs "HTTPS with SAS keys, locally" of docs/security.md:
// the broker started with a key, a call with it and one without, and the
// broker stopped by its process id.
func runSecurityPage(t *testing.T, p *doctest.Page) {
	s := startDocShell(t)
	b := p.Claim(t, "## HTTPS with SAS keys, locally", "sh")[0]
	out := s.run(b, 5*time.Minute, []string{"Unauthorized"}, "[]", `{"error":{"code":"Unauthorized"`)
	if strings.Contains(out, "Unauthorized") && strings.Index(out, "[]") > strings.Index(out, "Unauthorized") {
		t.Fatalf("the call with the key was refused, or the one without it was not:\n%s", out)
	}
	doctest.WaitClosed(t, s.ports.Replace("127.0.0.1:4438"), 30*time.Second)
}

// runLiveConfigPage runs "Trying it with a file" of docs/live-config.md: the
// broker following a declaration file, a second subscription skipped for a
// misspelt member and reported by /readyz, a JSON mistake reported with its
// line and column while the last good declaration stays.
func runLiveConfigPage(t *testing.T, p *doctest.Page) {
	s := startDocShell(t)
	blocks := p.Claim(t, "## Trying it with a file", "sh")
	if len(blocks) != 2 {
		t.Fatalf("live-config.md's try-out has %d sh blocks, want 2", len(blocks))
	}
	s.run(blocks[0], 5*time.Minute, nil, `"name":"hot"`, `"managedBy":"desired_config_file:bin/desired.json"`)
	out := s.run(blocks[1], time.Minute, nil,
		`"cold":`, `filter.subjectBeginWith is not a known member; did you mean subjectBeginsWith?`,
		`line 1, column`, `"name":"hot"`)
	if strings.Contains(out, "properties.filter") {
		t.Fatalf("an entry's error names the API's properties level, which a declaration does not have:\n%s", out)
	}
	doctest.WaitClosed(t, s.ports.Replace("127.0.0.1:5888"), 30*time.Second)
}
