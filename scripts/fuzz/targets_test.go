package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The targets are found in the packages' test files, other modules and
// testdata left out.
func TestFindTargets(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		path = filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n")
	write("pkg/a/a_test.go", "package a\n\nfunc FuzzB(f *testing.F) {}\nfunc FuzzA(f *testing.F) {}\nfunc TestC(t *testing.T) {}\n")
	write("pkg/a/a.go", "package a\n\nfunc FuzzNotATest(f *testing.F) {}\n")
	write("pkg/a/testdata/x_test.go", "func FuzzData(f *testing.F) {}\n")
	write("other/go.mod", "module y\n")
	write("other/o_test.go", "func FuzzOther(f *testing.F) {}\n")
	write("b_test.go", "func FuzzRoot(g *testing.F) {\n")
	got, err := findTargets(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []target{{"FuzzRoot", "."}, {"FuzzA", "./pkg/a"}, {"FuzzB", "./pkg/a"}}
	if len(got) != len(want) {
		t.Fatalf("targets %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("target %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestParse(t *testing.T) {
	out := `fuzz: elapsed: 0s, gathering baseline coverage: 0/12 completed
fuzz: elapsed: 3s, execs: 1000 (333/sec), new interesting: 2 (total: 14)
fuzz: elapsed: 6s, execs: 52345 (17000/sec), new interesting: 7 (total: 19)
--- FAIL: FuzzX (6.01s)
    Failing input written to testdata/fuzz/FuzzX/0123abcd
`
	r := parse(out)
	if r.execs != 52345 || r.interesting != 7 || r.input != "testdata/fuzz/FuzzX/0123abcd" || r.deadline {
		t.Errorf("parse = %+v", r)
	}
	if r := parse("fuzz: elapsed: 60s, execs: 9 (0/sec), new interesting: 0 (total: 3)\ncontext deadline exceeded\nFAIL"); !r.deadline || r.input != "" {
		t.Errorf("parse of a deadline = %+v", r)
	}
}

func TestCheckTime(t *testing.T) {
	for _, ok := range []string{"60s", "1m30s", "20000x"} {
		if err := checkTime(ok); err != nil {
			t.Errorf("checkTime(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "0s", "-1s", "x", "0x", "12", "tenx"} {
		if checkTime(bad) == nil {
			t.Errorf("checkTime(%q) accepted", bad)
		}
	}
}
