package tests_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Refused requests are counted by kind in eventgrid_auth_failures_total and
// logged as warnings at most once per interval, never with the key.
func TestAuthFailures_MetricAndLog(t *testing.T) {
	t.Parallel()
	const key = "Y29ycmVjdCBrZXkgZm9yIHRoZSBhdXRoIHRlc3Q="
	const wrong = "d3Jvbmcga2V5IGZvciB0aGUgYXV0aCB0ZXN0ISE="
	b := startBroker(t, merge(devEnv(),
		"metrics__reporterType", "prometheus",
		"inbound__clientAuth__sasKeys__enabled", "true",
		"inbound__clientAuth__sasKeys__key1", key))
	topics := b.URL + "/topics?" + apiVersion
	start := time.Now()
	for range 3 {
		if code := status(t, nil, http.MethodGet, topics, nil, "aeg-sas-key", wrong); code != http.StatusUnauthorized {
			t.Fatalf("wrong key: %d, want 401", code)
		}
	}
	for range 2 {
		if code := status(t, nil, http.MethodGet, topics, nil); code != http.StatusUnauthorized {
			t.Fatalf("no credentials: %d, want 401", code)
		}
	}
	elapsed := time.Since(start)
	s := mustScrape(t, b.URL, "aeg-sas-key", key)
	s.mustValue(t, 3, "eventgrid_auth_failures_total", "reason", "sas_key")
	s.mustValue(t, 2, "eventgrid_auth_failures_total", "reason", "no_credentials")
	s.mustValue(t, 0, "eventgrid_auth_failures_total", "reason", "sas_token")
	s.mustValue(t, 0, "eventgrid_auth_failures_total", "reason", "client_certificate")

	// One line per 10 s interval: five refusals within a few milliseconds
	// give one line (more only on a machine slow enough to span intervals).
	var lines []map[string]any
	eventually(t, 10*time.Second, func() error {
		if lines = b.Logs("request refused: not authenticated"); len(lines) == 0 {
			return errors.New("no refusal line yet")
		}
		return nil
	})
	t.Logf("5 refusals in %v gave %d log line(s)", elapsed, len(lines))
	if most := 1 + int(elapsed/(10*time.Second)); len(lines) > most {
		t.Errorf("%d refusal lines in %v, want at most %d", len(lines), elapsed, most)
	}
	if l := lines[0]; l["level"] != "warn" || l["reason"] != "sas_key" || l["path"] != "/topics" {
		t.Errorf("first refusal line %v, want a warning with reason sas_key and path /topics", l)
	}
	if out := b.Output(); strings.Contains(out, wrong) || strings.Contains(out, key) {
		t.Error("a SAS key reached the log")
	}
}
