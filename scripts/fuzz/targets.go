package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// target is one fuzz target: its function and its package, as a path
// relative to the module root ("./pkg/resource").
type target struct {
	name, pkg string
}

var fuzzFunc = regexp.MustCompile(`^func (Fuzz\w+)\(\w+ \*testing\.F\)`)

// findTargets returns the fuzz targets of the module at root, by package
// then name. Folders with a go.mod of their own are other modules and are
// left out, as are testdata folders.
func findTargets(root string) ([]target, error) {
	var out []target
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || fileExists(filepath.Join(path, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		names, err := fuzzFuncs(path)
		if err != nil {
			return err
		}
		pkg := "."
		if rel, _ := filepath.Rel(root, filepath.Dir(path)); rel != "." {
			pkg = "./" + filepath.ToSlash(rel)
		}
		for _, n := range names {
			out = append(out, target{name: n, pkg: pkg})
		}
		return nil
	})
	slices.SortFunc(out, func(a, b target) int {
		if c := strings.Compare(a.pkg, b.pkg); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return out, err
}

func fuzzFuncs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m := fuzzFunc.FindStringSubmatch(sc.Text()); m != nil {
			names = append(names, m[1])
		}
	}
	return names, sc.Err()
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// moduleRoot returns the root module's directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside the module: run it from the repository")
	}
	return filepath.Dir(mod), nil
}

// result is what one target's run printed.
type result struct {
	execs, interesting int64
	// deadline: the run ended with "context deadline exceeded".
	deadline bool
	// input is the failing input go test wrote, if any.
	input  string
	failed bool
	output string
}

var (
	progress = regexp.MustCompile(`execs: (\d+) .*new interesting: (\d+)`)
	written  = regexp.MustCompile(`Failing input written to (\S+)`)
)

// parse reads go test -fuzz output: the last progress line's counts and
// the failing input, if one was written.
func parse(out string) result {
	var r result
	for _, line := range strings.Split(out, "\n") {
		if m := progress.FindStringSubmatch(line); m != nil {
			r.execs, _ = strconv.ParseInt(m[1], 10, 64)
			r.interesting, _ = strconv.ParseInt(m[2], 10, 64)
		}
		if m := written.FindStringSubmatch(line); m != nil {
			r.input = m[1]
		}
		if strings.Contains(line, "context deadline exceeded") {
			r.deadline = true
		}
	}
	return r
}

// line is the report line of a target's run.
func (r result) line(t target) string {
	s := fmt.Sprintf("%-34s %-22s %12d execs %6d new", t.name, t.pkg, r.execs, r.interesting)
	switch {
	case r.failed && r.input != "":
		return s + "  FAIL: failing input in " + filepath.Join(t.pkg, r.input) + "\n" + indent(r.output)
	case r.failed:
		return s + "  FAIL\n" + indent(r.output)
	case r.deadline:
		return s + "  ok (stopped by -fuzztime with \"context deadline exceeded\", no failing input: golang/go#75804)"
	}
	return s + "  ok"
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
