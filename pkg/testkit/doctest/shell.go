package doctest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// Options say where and how a Group runs.
type Options struct {
	Dir    string   // the working directory
	Env    []string // added to the test's environment
	Output string   // the file that gets the standard output and error
}

// Group is a program started in a process group of its own, so that what it
// starts in the background (go run's child, a broker, a subscriber) is
// stopped with it.
type Group struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   string
	done  chan struct{}
}

// StartGroup starts name with args; it is stopped when the test ends.
func StartGroup(tb testing.TB, o Options, name string, args ...string) *Group {
	tb.Helper()
	f, err := os.Create(o.Output)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	g := &Group{cmd: exec.Command(name, args...), out: o.Output, done: make(chan struct{})}
	g.cmd.Dir = o.Dir
	g.cmd.Env = append(os.Environ(), o.Env...)
	g.cmd.Stdout, g.cmd.Stderr = f, f
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if g.stdin, err = g.cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	if err := g.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = g.cmd.Wait(); close(g.done) }()
	tb.Cleanup(g.Stop)
	return g
}

// Write writes text to the program's standard input.
func (g *Group) Write(tb testing.TB, text string) {
	tb.Helper()
	if _, err := io.WriteString(g.stdin, text); err != nil {
		tb.Fatalf("writing to %s: %v\n%s", g.cmd.Path, err, g.Output())
	}
}

// CloseInput closes the program's standard input: a shell then ends.
func (g *Group) CloseInput() { g.stdin.Close() }

// Exited reports whether the program (the group's leader) has exited.
func (g *Group) Exited() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// Output returns what the group has printed so far.
func (g *Group) Output() string {
	b, _ := os.ReadFile(g.out)
	return string(b)
}

// Stop sends SIGTERM to the whole group (the leader may have exited while
// its background children live on), and SIGKILL if it lingers.
func (g *Group) Stop() {
	g.stdin.Close()
	pgid := g.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && syscall.Kill(-pgid, 0) == nil {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-g.done
}

// Shell is a bash that takes blocks as a reader pastes them, one after the
// other, keeping its variables and background jobs between blocks.
type Shell struct {
	*Group
	n int
}

// FailedMark starts the line the shell prints when a command of a block
// exits with a non-zero status.
const FailedMark = "doctest: exit status "

// StartShell starts bash in a process group of its own, with a trap that
// prints a FailedMark line for every command that fails (the condition of
// an until or while loop excepted).
func StartShell(tb testing.TB, o Options) *Shell {
	tb.Helper()
	s := &Shell{Group: StartGroup(tb, o, "bash")}
	s.Write(tb, `trap 'echo "`+FailedMark+`$? from: $BASH_COMMAND"' ERR`+"\n")
	return s
}

// Run pastes the block's text, after r's replacements when r is not nil,
// and waits until the shell has run all of it; it returns what the block
// printed (with whatever its background jobs printed meanwhile). It fails
// tb if the shell exits, or has not finished within timeout.
func (s *Shell) Run(tb testing.TB, b *Block, r *strings.Replacer, timeout time.Duration) string {
	tb.Helper()
	text := b.Text
	if r != nil {
		text = r.Replace(text)
	}
	b.MarkRun()
	return s.RunText(tb, text, timeout)
}

// RunText pastes text that is not a block of a page (a test's own set-up)
// and waits for it as Run does.
func (s *Shell) RunText(tb testing.TB, text string, timeout time.Duration) string {
	tb.Helper()
	s.n++
	mark := fmt.Sprintf("doctest: pasted text %d done", s.n)
	start := len(s.Output())
	s.Write(tb, text+"\necho '"+mark+"'\n")
	var out string
	brokertest.Eventually(tb, timeout, func() error {
		all := s.Output()
		if i := strings.Index(all[min(start, len(all)):], mark); i >= 0 {
			out = all[start : start+i]
			return nil
		}
		if s.Exited() {
			tb.Fatalf("the shell exited while running:\n%s\n--- shell\n%s", text, all)
		}
		return fmt.Errorf("the shell is still running:\n%s\n--- shell\n%s", text, all[min(start, len(all)):])
	})
	return out
}

// Close ends the shell's input and waits for it to exit.
func (s *Shell) Close(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	s.CloseInput()
	brokertest.Eventually(tb, timeout, func() error {
		if !s.Exited() {
			return errors.New("the shell is still running")
		}
		return nil
	})
}

// Failures returns the lines of out that say a command failed: the shell's
// FailedMark lines and curl's own errors ("curl: (7) Failed to connect").
func Failures(out string) []string {
	var bad []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, FailedMark) || strings.HasPrefix(l, "curl: (") {
			bad = append(bad, l)
		}
	}
	return bad
}

// FreeAddr returns a loopback address no one listens on now, from
// brokertest.FreePort: one the page's programs listen on later.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	return brokertest.FreeAddr(tb)
}

// WaitClosed waits until nothing listens on addr any more.
func WaitClosed(tb testing.TB, addr string, timeout time.Duration) {
	tb.Helper()
	brokertest.Eventually(tb, timeout, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return nil
		}
		c.Close()
		return fmt.Errorf("something still listens on %s", addr)
	})
}
