package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReport_Events checks the output rebuilt from go test -json events:
// failed tests shown without the === framing, passed ones silent, skipped
// ones listed with their reason, the closing count.
func TestReport_Events(t *testing.T) {
	events := `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"    a_test.go:5: chatter\n"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"m/a","Test":"TestOK"}
{"Action":"run","Package":"m/a","Test":"TestNeedsMosquitto"}
{"Action":"output","Package":"m/a","Test":"TestNeedsMosquitto","Output":"=== RUN   TestNeedsMosquitto\n"}
{"Action":"output","Package":"m/a","Test":"TestNeedsMosquitto","Output":"    a_test.go:9: mosquitto not found; install it with: bash scripts/ci-deps/mosquitto.sh\n"}
{"Action":"output","Package":"m/a","Test":"TestNeedsMosquitto","Output":"--- SKIP: TestNeedsMosquitto (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestNeedsMosquitto"}
{"Action":"run","Package":"m/a","Test":"TestBad"}
{"Action":"output","Package":"m/a","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"m/a","Test":"TestBad","Output":"    a_test.go:12: want 1, got 2\n"}
{"Action":"output","Package":"m/a","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"m/a","Test":"TestBad"}
{"Action":"output","Package":"m/a","Output":"FAIL\n"}
{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.010s\n"}
{"Action":"fail","Package":"m/a"}
{"Action":"output","Package":"m/b","Output":"testing: warning: no tests to run\n"}
{"Action":"output","Package":"m/b","Output":"PASS\n"}
{"Action":"output","Package":"m/b","Output":"ok  \tm/b\t0.005s\n"}
{"Action":"pass","Package":"m/b"}
{"Action":"output","Package":"m/c","Output":"?   \tm/c\t[no test files]\n"}
{"Action":"skip","Package":"m/c"}
{"ImportPath":"m/d [m/d.test]","Action":"build-output","Output":"# m/d [m/d.test]\n"}
{"ImportPath":"m/d [m/d.test]","Action":"build-output","Output":"d/d_test.go:3:1: syntax error\n"}
{"Action":"output","Package":"m/d","Output":"FAIL\tm/d [build failed]\n"}
{"Action":"fail","Package":"m/d","FailedBuild":"m/d [m/d.test]"}
go: warning: not an event
`
	var out strings.Builder
	r := newReport(&out, false)
	for _, l := range strings.Split(strings.TrimSuffix(events, "\n"), "\n") {
		r.Feed([]byte(l))
	}
	r.Summary()
	want := "    a_test.go:12: want 1, got 2\n" +
		"--- FAIL: TestBad (0.00s)\n" +
		"FAIL\n" +
		"FAIL\tm/a\t0.010s\n" +
		"ok  \tm/b\t0.005s\n" +
		"?   \tm/c\t[no test files]\n" +
		"# m/d [m/d.test]\n" +
		"d/d_test.go:3:1: syntax error\n" +
		"FAIL\tm/d [build failed]\n" +
		"go: warning: not an event\n" +
		"\nskipped tests (1):\n" +
		"  m/a TestNeedsMosquitto: a_test.go:9: mosquitto not found; install it with: bash scripts/ci-deps/mosquitto.sh\n" +
		"\ntests: 1 passed, 2 failed, 1 skipped\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestRun_EveryModule runs the real go test -json in a small repository of
// two modules (and a go.mod under testdata, which is not a module of it,
// and a module without tests, which has nothing to run),
// and checks both ran, each module's output is one block, and the skip is
// reported.
func TestRun_EveryModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in a temporary repository; not with -short")
	}
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/root\n\ngo 1.21\n")
	write("a/a_test.go", "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\n"+
		"func TestNeedsThing(t *testing.T) { t.Skip(\"thing not found; install it with: bash scripts/thing.sh\") }\n")
	write("nested/go.mod", "module example.com/nested\n\ngo 1.21\n")
	write("nested/b_test.go", "package nested\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) { t.Fatal(\"broken on purpose\") }\n")
	write("a/testdata/ignored/go.mod", "module example.com/ignored\n\ngo 1.21\n")
	// A module with no tests, such as a tool wrapper: go test would say
	// "no packages to test" and fail.
	write("tools/go.mod", "module example.com/tools\n\ngo 1.21\n")
	write("tools/tool.go", "package tools\n")

	mods, err := modules(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 2 || mods[0] != root || mods[1] != filepath.Join(root, "nested") {
		t.Fatalf("modules = %v, want the root and nested", mods)
	}
	var out, errs strings.Builder
	args := []string{"test", "-json", "-count=1"}
	code, r := runModules(root, mods, args, &out, &errs, false)
	r.Summary()
	got := out.String()
	if code == 0 {
		t.Errorf("exit code 0, want nested's failure")
	}
	for _, want := range []string{
		"ok  \texample.com/root/a\t",
		"--- FAIL: TestB (",
		"b_test.go:5: broken on purpose\n",
		"FAIL\texample.com/nested\t",
		"  example.com/root/a TestNeedsThing: a_test.go:7: thing not found; install it with: bash scripts/thing.sh\n",
		"\ntests: 1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// One block per module, in module order, though they ran at once.
	rootHead, nestedHead := strings.Index(got, "(module .)\n"), strings.Index(got, "(module nested)\n")
	rootOK, nestedFail := strings.Index(got, "ok  \texample.com/root/a\t"), strings.Index(got, "--- FAIL: TestB (")
	if rootHead != len("go test -json -count=1 ./... ") || !(rootHead < rootOK && rootOK < nestedHead && nestedHead < nestedFail) {
		t.Errorf("the modules' blocks are not one after the other:\n%s", got)
	}
	if strings.Contains(got, "=== RUN") {
		t.Errorf("output shows -json's framing lines:\n%s", got)
	}
}

// TestRelay_HoldsUntilAttached: a module's output written before its turn
// comes out whole, in order, when it is attached, and later writes pass
// straight on.
func TestRelay_HoldsUntilAttached(t *testing.T) {
	var r relay
	var out strings.Builder
	r.Write([]byte("one\n"))
	r.Write([]byte("two\n"))
	if out.Len() != 0 {
		t.Fatalf("written before attach: %q", out.String())
	}
	r.attach(&out)
	r.Write([]byte("three\n"))
	if out.String() != "one\ntwo\nthree\n" {
		t.Errorf("relayed %q", out.String())
	}
}

// TestPackages_BlackBoxFirst: a module's own tests folder is given to go
// test first; a tests folder that is a module of its own is not.
func TestPackages_BlackBoxFirst(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"withTests/tests", "ownModule/tests", "none/pkg"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "ownModule/tests/go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{
		"withTests": "./tests/... ./...",
		"ownModule": "./...",
		"none":      "./...",
	} {
		if got := strings.Join(packages(filepath.Join(root, dir)), " "); got != want {
			t.Errorf("packages of %s = %q, want %q", dir, got, want)
		}
	}
}
