package api_test

import (
	"go/build"
	"testing"
)

// The API depends on the interfaces it declares, not on the registry, the
// dispatcher or the engines behind them.
func TestImportsNoImplementation(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		switch imp {
		case "github.com/edgegrid/edgegrid/pkg/registry", "github.com/edgegrid/edgegrid/pkg/dispatch",
			"github.com/edgegrid/edgegrid/pkg/push", "github.com/edgegrid/edgegrid/pkg/budget":
			t.Errorf("pkg/api imports %s", imp)
		}
	}
}
