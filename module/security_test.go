package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// Every line setupSecurity and the certificate sources log names its
// component once, whichever of them wrote it.
func TestSetupSecurity_LogsComponentOnce(t *testing.T) {
	ca := testpki.NewCA(t, "edge ca")
	wl := testpki.NewWorkloadServer(t, ca)
	cfg := config.Default()
	cfg.IoTEdgeWorkloadURI = wl.URI()
	cfg.IoTEdgeModuleID, cfg.IoTEdgeGenerationID = testpki.WorkloadModuleID, testpki.WorkloadGenerationID
	cfg.ClientCertEnabled = true
	cfg.OutboundClientCertEnabled = true
	var buf bytes.Buffer
	sec, err := setupSecurity(context.Background(), cfg, zerolog.New(&buf))
	if err != nil {
		t.Fatal(err)
	}
	defer sec.close(context.Background())
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 2 {
		t.Fatalf("want the certificate lines, got %q", buf.String())
	}
	for _, line := range lines {
		if n := strings.Count(line, `"component":`); n != 1 {
			t.Errorf("%d component fields in %s", n, line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("not JSON: %s", line)
		}
	}
}
