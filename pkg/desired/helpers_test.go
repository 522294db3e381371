package desired_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// MustApply applies doc to a new registry with the default options and
// returns the registry, the result and the log lines.
func MustApply(tb testing.TB, doc string) (*registry.Registry, desired.Result, []map[string]any) {
	tb.Helper()
	reg := registry.New(registry.DefaultOptions(), nil)
	res, lines := MustApplyTo(tb, reg, doc)
	return reg, res, lines
}

// MustApplyTo applies doc to reg and returns the result and the log lines.
func MustApplyTo(tb testing.TB, reg *registry.Registry, doc string) (desired.Result, []map[string]any) {
	tb.Helper()
	var buf bytes.Buffer
	res, err := desired.NewReconciler(reg, zerolog.New(&buf), desired.Options{}).Apply(context.Background(), desired.Inline, []byte(doc))
	if err != nil {
		tb.Fatalf("Apply: %v", err)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			tb.Fatalf("log line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return res, lines
}

// withMessage returns the log lines with message msg.
func withMessage(lines []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["message"] == msg {
			out = append(out, l)
		}
	}
	return out
}
