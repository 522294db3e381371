package kubernetes_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/doctest"
)

// TestDocsPreview runs the helm-less preview of docs/kubernetes.md as a
// reader pastes it, from the repository's folder, with the page's own
// my-values.yaml: the chart renders with its values and lints clean. The
// only change to the text is where my-values.yaml lies, the test's
// temporary folder instead of the repository's.
func TestDocsPreview(t *testing.T) {
	brokertest.RequireCommand(t, "bash", "your system's package manager (Debian: apt-get install bash)")
	p := doctest.Load(t, docsFile)
	var values *doctest.Block
	for _, b := range p.Section("## Install") {
		if b.Lang == "yaml" && strings.Contains(b.Text, "desiredConfig:") {
			values = b
		}
	}
	if values == nil {
		t.Fatalf("%s has no my-values.yaml under ## Install", docsFile)
	}
	preview := p.Claim(t, "### Without helm: a preview of what the chart renders", "sh")[0]
	if !strings.Contains(preview.Text, "../../my-values.yaml") {
		t.Fatalf("the preview no longer reads ../../my-values.yaml, which this test replaces:\n%s", preview.Text)
	}
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "my-values.yaml"), []byte(values.Text), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// helm keeps no state the preview needs: its directories go to a
	// throwaway place, as in the other helm tests.
	env := []string{"HELM_CONFIG_HOME=" + filepath.Join(tmp, "config"), "HELM_CACHE_HOME=" + filepath.Join(tmp, "cache"),
		"HELM_DATA_HOME=" + filepath.Join(tmp, "data"), "KUBECONFIG=" + filepath.Join(tmp, "kubeconfig")}
	s := doctest.StartShell(t, doctest.Options{Dir: root, Env: env, Output: filepath.Join(tmp, "shell.log")})
	out := s.Run(t, preview, strings.NewReplacer("../../my-values.yaml", filepath.Join(tmp, "my-values.yaml")), 5*time.Minute)
	for _, want := range []string{"kind: Deployment", "orders-to-billing", "1 chart(s) linted, 0 chart(s) failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the preview's output lacks %q", want)
		}
	}
	if f := doctest.Failures(out); len(f) > 0 {
		t.Errorf("commands of the preview failed: %q", f)
	}
	if t.Failed() {
		t.Logf("the preview printed:\n%s", out)
	}
}
