package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("\t_ = 1\n", 59)
	src := "package p\n\nfunc short() {\n" + body[:len(body)-len("\t_ = 1\n")] + "}\n\n" +
		"type T struct{}\n\nfunc (t *T) long() {\n" + body + "}\n\nfunc edge() {\n" + body[:len(body)-len("\t_ = 1\n")*1] + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc TestX() {\n"+body+body+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	found, err := measure([]string{dir}, 60)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || !strings.HasSuffix(found[0].key, "p.go T.long") || found[0].lines != 61 {
		t.Fatalf("found %+v, want only T.long at 61 lines", found)
	}
}

func TestJudge(t *testing.T) {
	found := []long{{key: "pkg/a.go f", lines: 70}, {key: "pkg/b.go g", lines: 61}}
	allowed := map[string]string{"pkg/a.go f": "one piece", "pkg/c.go h": "was long"}
	got := judge(found, allowed, 60)
	if len(got) != 2 || !strings.Contains(got[0], "pkg/b.go g: 61 lines") || !strings.Contains(got[1], "pkg/c.go h: listed as an exception") {
		t.Fatalf("judge = %q", got)
	}
	if got := judge(found[:1], map[string]string{"pkg/a.go f": ""}, 60); len(got) != 0 {
		t.Fatalf("judge = %q, want nothing", got)
	}
}
