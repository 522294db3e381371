// Command test runs every test of the module: go run ./scripts/test.
//
// It runs `go test -race -count=1 ./...` when a C compiler is available (the
// race detector needs cgo) and `go test -count=1 ./...` otherwise, saying so,
// so that the same command works on a machine with only Go installed. Extra
// arguments are passed to go test.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	args := []string{"test", "-count=1"}
	if raceAvailable() {
		args = append(args, "-race")
		fmt.Println("race detector: on")
	} else {
		fmt.Println("race detector: off (it needs a C compiler such as gcc; install one to enable it)")
	}
	args = append(args, os.Args[1:]...)
	args = append(args, "./...")
	fmt.Println("go", strings.Join(args, " "))
	cmd := exec.Command("go", args...)
	cmd.Stdout, cmd.Stderr, cmd.Stdin = os.Stdout, os.Stderr, os.Stdin
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
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
