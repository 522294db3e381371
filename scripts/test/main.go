// Command test runs every test of the repository: go run ./scripts/test.
//
// It runs `go test -race -count=1 ./...` in every Go module of the
// repository (the root one and each folder below it with a go.mod of its
// own), all at once with the same flags, when a C compiler is available
// (the race detector needs cgo), and without -race otherwise, saying so, so
// that the same command works on a machine with only Go installed. Extra
// arguments are passed to go test.
//
// The tests run with -json, and the output is printed as go test prints it
// without -json: the ok and FAIL lines of each package, and the output of
// each failed test with its --- FAIL line (everything, with -v). Each
// module's output is one block under its go test line, in module order: the
// root module's as it comes, another's held until the modules before it have
// ended. At the end it lists the skipped tests, each with the last line it
// printed (the reason given to t.Skip), and closes with "tests: N passed, N
// failed, N skipped". It exits non-zero when any module's go test does.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

func main() {
	args := []string{"test", "-json", "-count=1"}
	if raceAvailable() {
		args = append(args, "-race")
		fmt.Println("race detector: on")
	} else {
		fmt.Println("race detector: off (it needs a C compiler such as gcc; install one to enable it)")
	}
	args = append(args, os.Args[1:]...)

	root, err := moduleRoot()
	if err != nil {
		fatal(err)
	}
	mods, err := modules(root)
	if err != nil {
		fatal(err)
	}
	code, r := runModules(root, mods, args, os.Stdout, os.Stderr, verbose(os.Args[1:]))
	r.Summary()
	os.Exit(code)
}

// runModules runs go with args and the packages of each module (see
// packages) in every module of mods at once, and prints each module's
// output as a block, in order, under its go test line: the first's as it
// comes, each other's (its go test's standard error too) held until the
// ones before it have ended, then as it comes. It returns the first
// non-zero exit code in module order and the report of them all.
//
// The modules run at once because their longest tests mostly wait: the
// black-box tests on brokers, browsers and emulators, the chart's on
// kube-apiserver and etcd.
func runModules(root string, mods, args []string, stdout, stderr io.Writer, verbose bool) (int, *report) {
	outs := make([]*relay, len(mods))
	reports := make([]*report, len(mods))
	codes := make([]int, len(mods))
	done := make([]chan struct{}, len(mods))
	for i, dir := range mods {
		rel, _ := filepath.Rel(root, dir)
		args := append(slices.Clip(args), packages(dir)...)
		outs[i] = &relay{}
		if i == 0 {
			outs[i].attach(stdout)
		}
		fmt.Fprintf(outs[i], "go %s (module %s)\n", strings.Join(args, " "), filepath.ToSlash(rel))
		reports[i] = newReport(outs[i], verbose)
		done[i] = make(chan struct{})
		errs := io.Writer(outs[i])
		if i == 0 {
			errs = stderr
		}
		go func() {
			defer close(done[i])
			codes[i] = run(dir, args, reports[i], errs)
		}()
	}
	code, all := 0, newReport(stdout, verbose)
	for i := range mods {
		if i > 0 {
			outs[i].attach(stdout)
		}
		<-done[i]
		if codes[i] != 0 && code == 0 {
			code = codes[i]
		}
		all.add(reports[i])
	}
	return code, all
}

// packages returns the packages go test is given in the module at dir:
// ./..., after ./tests/... when the module has a tests folder of its own.
// go test starts packages in the order given (each once), and the
// black-box tests there take longest, mostly waiting: they start first, and
// the other packages run beside them.
func packages(dir string) []string {
	tests := filepath.Join(dir, "tests")
	if fi, err := os.Stat(tests); err == nil && fi.IsDir() && !exists(filepath.Join(tests, "go.mod")) {
		return []string{"./tests/...", "./..."}
	}
	return []string{"./..."}
}

// relay holds what is written to it until attach, then passes it on.
type relay struct {
	mu  sync.Mutex
	buf bytes.Buffer
	w   io.Writer
}

func (r *relay) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		return r.w.Write(p)
	}
	return r.buf.Write(p)
}

// attach writes what was held to w, and from then on passes writes on.
func (r *relay) attach(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.buf.WriteTo(w)
	r.w = w
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "scripts/test:", err)
	os.Exit(1)
}

// run runs go with args in dir, feeding its JSON output to r and its
// standard error to stderr, and returns its exit code.
func run(dir string, args []string, r *report, stderr io.Writer) int {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatal(err)
	}
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		r.Feed(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, "scripts/test: reading go test's output:", err)
		_, _ = io.Copy(stderr, out) // let go test finish; its rest shows, in this module's block
	}
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(stderr, "scripts/test:", err)
		return 1
	}
	return 0
}

// moduleRoot returns the folder of the main module go sees from here.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module; run it from the repository")
	}
	return filepath.Dir(gomod), nil
}

// modules returns root and every folder below it holding a go.mod and at
// least one test file of its own, skipping the folders the go command
// ignores (testdata, vendor, names starting with . or _) and node_modules.
// A module without tests, such as one that only wraps a tool to build it,
// is left out: go test would fail on it with "no packages to test".
func modules(root string) ([]string, error) {
	mods := []string{root}
	var tested []bool
	err := walkGo(root, func(path string, d fs.DirEntry) error {
		switch {
		case d.IsDir() && path != root && exists(filepath.Join(path, "go.mod")):
			mods = append(mods, path)
		case !d.IsDir() && strings.HasSuffix(d.Name(), "_test.go"):
			for len(tested) < len(mods) {
				tested = append(tested, false)
			}
			tested[owner(mods, path)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := mods[:1] // the root module always runs, so that its go test reports
	for i, m := range mods[1:] {
		if i+1 < len(tested) && tested[i+1] {
			out = append(out, m)
		}
	}
	return out, nil
}

// walkGo walks root as the go command sees it, calling fn for every folder
// and file outside the folders it ignores.
func walkGo(root string, fn func(path string, d fs.DirEntry) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root {
			name := d.Name()
			if name == "testdata" || name == "vendor" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
		}
		return fn(path, d)
	})
}

// owner returns the index in mods of the innermost module holding path.
func owner(mods []string, path string) int {
	best := 0
	for i, m := range mods {
		if strings.HasPrefix(path, m+string(filepath.Separator)) && len(m) > len(mods[best]) {
			best = i
		}
	}
	return best
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// verbose reports whether the go test flags ask for -v.
func verbose(args []string) bool {
	for _, a := range args {
		switch a {
		case "-v", "--v", "-v=true", "--v=true", "-test.v", "-test.v=true":
			return true
		}
	}
	return false
}

// raceAvailable reports whether cgo is enabled and the C compiler go would
// use can be found.
func raceAvailable() bool {
	out, err := exec.Command("go", "env", "CGO_ENABLED", "CC").Output()
	if err != nil {
		return false
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "1" {
		return false
	}
	_, err = exec.LookPath(f[1])
	return err == nil
}
