package doctest_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/doctest"
)

const page = "# Title\n\n" +
	"```sh\necho top\n```\n\n" +
	"## Try it\n\nText.\n\n" +
	"```sh\necho one\n```\n\n" +
	"```json\n{\"a\": 1}\n```\n\n" +
	"<!-- not run: needs a cloud service -->\n" +
	"```bash\naz login\n```\n\n" +
	"### A program\n\n" +
	"```go\npackage main\n```\n"

func TestParse(t *testing.T) {
	p := doctest.Parse("p.md", page)
	var got []string
	for _, b := range p.Blocks {
		got = append(got, fmt.Sprintf("%d %s %q %q %q %v", b.Line, b.Lang, b.Heading, b.Text, b.NotRun, b.Runnable()))
	}
	want := []string{
		`3 sh "# Title" "echo top\n" "" true`,
		`11 sh "## Try it" "echo one\n" "" true`,
		`15 json "## Try it" "{\"a\": 1}\n" "" false`,
		`20 bash "## Try it" "az login\n" "needs a cloud service" false`,
		`26 go "### A program" "package main\n" "" true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w := p.Blocks[1].Where(); w != "p.md:11 (## Try it)" {
		t.Errorf("Where = %q", w)
	}
}

// recorder stands in for a test, to see what Claim and Check report.
type recorder struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper()                   {}
func (r *recorder) Name() string              { return "recorder" }
func (r *recorder) Skipped() bool             { return false }
func (r *recorder) Failed() bool              { return false }
func (r *recorder) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestCheck(t *testing.T) {
	t.Run("UnclaimedBlocksFail", func(t *testing.T) {
		p := doctest.Parse("p.md", page)
		r := &recorder{TB: t}
		p.Claim(r, "## Try it", "sh")[0].MarkRun()
		r.end()
		p.Check(r)
		if len(r.errs) != 2 || !strings.Contains(r.errs[0], "p.md:3 (# Title)") || !strings.Contains(r.errs[1], "p.md:26 (### A program)") {
			t.Errorf("errors: %q, want the top sh block and the go block reported", r.errs)
		}
	})
	t.Run("ClaimedBlocksMustRun", func(t *testing.T) {
		p := doctest.Parse("p.md", page)
		r := &recorder{TB: t}
		p.Claim(r, "### A program", "go")
		r.end()
		if len(r.errs) != 1 || !strings.Contains(r.errs[0], "p.md:26") || !strings.Contains(r.errs[0], "never run") {
			t.Errorf("errors: %q, want the go block reported as never run", r.errs)
		}
	})
	t.Run("MarkedBlocksAreNotClaimed", func(t *testing.T) {
		p := doctest.Parse("p.md", page)
		r := &recorder{TB: t}
		if got := p.Claim(r, "## Try it", "sh"); len(got) != 1 || got[0].Text != "echo one\n" {
			t.Errorf("claimed %d blocks, want only the one not marked", len(got))
		}
	})
}

func TestShell(t *testing.T) {
	dir := t.TempDir()
	s := doctest.StartShell(t, doctest.Options{Dir: dir, Output: filepath.Join(dir, "shell.log")})
	p := doctest.Parse("p.md", "## A\n```sh\nX=1\necho x=$X\nfalse\n```\n")
	b := p.Claim(t, "## A", "sh")[0]
	out := s.Run(t, b, nil, 30*time.Second)
	if !strings.Contains(out, "x=1") {
		t.Errorf("output %q lacks the block's line", out)
	}
	if f := doctest.Failures(out); len(f) != 1 || !strings.Contains(f[0], "1 from: false") {
		t.Errorf("failures %q, want the failing false", f)
	}
	// The variable survives from one paste to the next.
	if out := s.RunText(t, "echo again=$X", 30*time.Second); !strings.Contains(out, "again=1") || strings.Contains(out, "x=1") {
		t.Errorf("second output %q", out)
	}
	s.Close(t, 30*time.Second)
	p.Check(t)
}
