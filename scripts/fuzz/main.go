// Command fuzz runs every fuzz target of the repository, one after the
// other, for the same time each: go run ./scripts/fuzz -time 60s.
//
// It finds the targets itself (every func FuzzXxx(*testing.F) in the root
// module's test files), runs each with go test -run='^$' -fuzz='^FuzzXxx$'
// -fuzztime=<time> in its package, and prints one line per target with its
// executions and new corpus entries, then the totals. -time takes a duration
// (60s) or a count of executions (20000x), as -fuzztime does; -run keeps the
// targets whose name or package matches a regular expression; -parallel sets
// the fuzzing workers (go test -parallel; default: all processors, so give
// it 1 on a shared machine); -list prints the targets and exits.
//
// A target that finds a failing input fails the run: its line says so and
// names the file go test wrote to the package's testdata/fuzz, which then
// runs with every go test as a regression case. A run stopped by its
// -fuzztime duration with "context deadline exceeded" and no failing input
// (golang/go#75804) is not a finding, and is reported as such.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	fuzzTime := flag.String("time", "60s", "how long to run each target: a duration (60s) or a count of executions (20000x)")
	run := flag.String("run", "", "run only the targets whose name or package matches this regular expression")
	parallel := flag.Int("parallel", 0, "fuzzing workers per target (go test -parallel); 0: go test's default")
	list := flag.Bool("list", false, "list the targets and exit")
	flag.Parse()
	if err := checkTime(*fuzzTime); err != nil {
		fatal(err)
	}
	filter, err := regexp.Compile(*run)
	if err != nil {
		fatal(fmt.Errorf("-run: %w", err))
	}
	root, err := moduleRoot()
	if err != nil {
		fatal(err)
	}
	all, err := findTargets(root)
	if err != nil {
		fatal(err)
	}
	var targets []target
	for _, t := range all {
		if filter.MatchString(t.name) || filter.MatchString(t.pkg) {
			targets = append(targets, t)
		}
	}
	if *list {
		for _, t := range targets {
			fmt.Printf("%-36s %s\n", t.name, t.pkg)
		}
		return
	}
	if len(targets) == 0 {
		fatal(fmt.Errorf("no fuzz target matches %q", *run))
	}
	fmt.Printf("fuzz: %d targets, %s each\n", len(targets), *fuzzTime)
	var total result
	start := time.Now()
	failed := 0
	for _, t := range targets {
		r := fuzzOne(root, t, *fuzzTime, *parallel)
		fmt.Println(r.line(t))
		total.execs += r.execs
		total.interesting += r.interesting
		if r.failed {
			failed++
		}
	}
	fmt.Printf("fuzz: %d targets, %d executions, %d new corpus entries, in %s; %d failing\n",
		len(targets), total.execs, total.interesting, time.Since(start).Round(time.Second), failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "scripts/fuzz:", err)
	os.Exit(2)
}

// checkTime accepts what go test's -fuzztime accepts.
func checkTime(s string) error {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if c, err := strconv.Atoi(n); err == nil && c > 0 {
			return nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return nil
	}
	return fmt.Errorf("-time %q: want a duration such as 60s or a count such as 20000x", s)
}

// fuzzOne runs one target and reads its output.
func fuzzOne(root string, t target, fuzzTime string, parallel int) result {
	args := []string{"test", "-run=^$", "-fuzz=^" + t.name + "$", "-fuzztime=" + fuzzTime}
	if parallel > 0 {
		args = append(args, "-parallel="+strconv.Itoa(parallel))
	}
	cmd := exec.Command("go", append(args, t.pkg)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	r := parse(string(out))
	r.failed = err != nil && !(r.deadline && r.input == "")
	if r.failed {
		r.output = string(out)
	}
	return r
}
