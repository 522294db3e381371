package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of go test -json (see go doc cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// skipped is a test that called t.Skip, and why.
type skipped struct {
	Package, Test, Reason string
}

// report turns go test -json events back into go test's ordinary output
// and keeps what the summary needs.
type report struct {
	w       io.Writer
	verbose bool

	output map[string]*strings.Builder // a running test's or package's output, by package and test
	failed map[string]bool             // packages with a failed test

	skips                         []skipped
	passed, failedTests, nSkipped int
	failedPackages                int // failed without a failed test: a build failure, a panic at init
}

func newReport(w io.Writer, verbose bool) *report {
	return &report{w: w, verbose: verbose, output: map[string]*strings.Builder{}, failed: map[string]bool{}}
}

// Feed takes one line of go test -json output.
func (r *report) Feed(line []byte) {
	var e event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
		// Not an event (go test prints some errors this way): pass it on.
		fmt.Fprintf(r.w, "%s\n", line)
		return
	}
	if e.Test == "" {
		r.packageEvent(e)
		return
	}
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "output":
		if r.verbose {
			io.WriteString(r.w, e.Output)
			return
		}
		b := r.output[key]
		if b == nil {
			b = &strings.Builder{}
			r.output[key] = b
		}
		b.WriteString(e.Output)
	case "pass":
		r.passed++
		delete(r.output, key)
	case "fail":
		r.failedTests++
		r.failed[e.Package] = true
		if b := r.output[key]; b != nil {
			io.WriteString(r.w, withoutFraming(b.String()))
		}
		delete(r.output, key)
	case "skip":
		r.nSkipped++
		reason := ""
		if b := r.output[key]; b != nil {
			reason = skipReason(b.String())
		}
		r.skips = append(r.skips, skipped{Package: e.Package, Test: e.Test, Reason: reason})
		delete(r.output, key)
	}
}

// packageEvent handles an event of a package as a whole, or of the build.
// A package's own output is held until it ends: go test without -v shows
// all of it when the package fails, and only its ok line (and such lines as
// benchmark results) when it passes.
func (r *report) packageEvent(e event) {
	if e.Action == "build-output" || r.verbose && e.Action == "output" {
		io.WriteString(r.w, e.Output)
		return
	}
	key := e.Package + "\x00"
	switch e.Action {
	case "output":
		b := r.output[key]
		if b == nil {
			b = &strings.Builder{}
			r.output[key] = b
		}
		b.WriteString(e.Output)
	case "pass", "skip":
		if b := r.output[key]; b != nil {
			for _, l := range strings.SplitAfter(b.String(), "\n") {
				if l != "PASS\n" && l != "testing: warning: no tests to run\n" {
					io.WriteString(r.w, l)
				}
			}
		}
		delete(r.output, key)
	case "fail":
		if !r.failed[e.Package] {
			r.failedPackages++
		}
		if b := r.output[key]; b != nil {
			io.WriteString(r.w, b.String())
		}
		delete(r.output, key)
	}
}

// withoutFraming drops the === RUN, PAUSE, CONT and NAME lines that -json
// implies, which go test does not print without -v.
func withoutFraming(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "=== ") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// skipReason is the last line a skipped test printed before its --- SKIP
// line: the message it gave t.Skip.
func skipReason(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		return l
	}
	return "(no reason given)"
}

// add counts what o counted, and its skipped tests, in r.
func (r *report) add(o *report) {
	r.skips = append(r.skips, o.skips...)
	r.passed += o.passed
	r.failedTests += o.failedTests
	r.nSkipped += o.nSkipped
	r.failedPackages += o.failedPackages
}

// Summary prints the skipped tests and the closing count.
func (r *report) Summary() {
	if len(r.skips) > 0 {
		fmt.Fprintf(r.w, "\nskipped tests (%d):\n", len(r.skips))
		for _, s := range r.skips {
			fmt.Fprintf(r.w, "  %s %s: %s\n", s.Package, s.Test, s.Reason)
		}
	}
	fmt.Fprintf(r.w, "\ntests: %d passed, %d failed, %d skipped\n", r.passed, r.failedTests+r.failedPackages, r.nSkipped)
}
