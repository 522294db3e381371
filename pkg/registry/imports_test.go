package registry_test

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// The registry validates destinations without the senders: it reaches
// none of them, directly or through another package.
func TestImportsNoSender(t *testing.T) {
	const module = "github.com/edgegrid/edgegrid/"
	senders := []string{"pkg/servicebus", "pkg/webhook", "pkg/storagequeue", "pkg/edgehub", "pkg/deadletter", "pkg/push"}
	seen := map[string]string{} // package -> the package that imported it
	var walk func(pkg, dir string)
	walk = func(pkg, dir string) {
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok || seen[rel] != "" {
				continue
			}
			seen[rel] = pkg
			walk(rel, filepath.Join("..", "..", rel))
		}
	}
	walk("pkg/registry", ".")
	for _, s := range senders {
		if by := seen[s]; by != "" {
			t.Errorf("pkg/registry reaches %s (imported by %s)", s, by)
		}
	}
	if seen["pkg/azconn"] == "" {
		t.Error("pkg/registry does not use pkg/azconn for connection strings")
	}
}
