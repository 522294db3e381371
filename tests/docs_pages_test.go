package tests_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/doctest"
)

// runSecurityPage runs "HTTPS with SAS keys, locally" of docs/security.md:
// the broker started with a key, a call with it and one without (refused,
// naming the kinds of credential the broker takes), and the broker stopped
// by its process id.
func runSecurityPage(t *testing.T, p *doctest.Page) {
	s := startDocShell(t)
	b := p.Claim(t, "## HTTPS with SAS keys, locally", "sh")[0]
	out := s.run(b, 5*time.Minute, []string{"Unauthorized"}, "[]", `{"error":{"code":"Unauthorized"`,
		"this broker takes SAS keys only", `SharedAccessKey header="aeg-sas-key", error="missing"`)
	if strings.Contains(out, "Unauthorized") && strings.Index(out, "[]") > strings.Index(out, "Unauthorized") {
		t.Fatalf("the call with the key was refused, or the one without it was not:\n%s", out)
	}
	doctest.WaitClosed(t, s.ports.Replace("127.0.0.1:4438"), 30*time.Second)
}

// runLiveConfigPage runs "Trying it with a file" of docs/live-config.md: the
// broker following a declaration file, a second subscription skipped for a
// misspelt member and reported by /readyz, a JSON mistake reported with its
// line and column while the last good declaration stays.
func runLiveConfigPage(t *testing.T, p *doctest.Page) {
	s := startDocShell(t)
	blocks := p.Claim(t, "## Trying it with a file", "sh")
	if len(blocks) != 2 {
		t.Fatalf("live-config.md's try-out has %d sh blocks, want 2", len(blocks))
	}
	s.run(blocks[0], 5*time.Minute, nil, `"name":"hot"`, `"managedBy":"desired_config_file:bin/desired.json"`)
	out := s.run(blocks[1], time.Minute, nil,
		`"cold":`, `filter.subjectBeginWith is not a known member; did you mean subjectBeginsWith?`,
		`line 1, column`, `"name":"hot"`)
	if strings.Contains(out, "properties.filter") {
		t.Fatalf("an entry's error names the API's properties level, which a declaration does not have:\n%s", out)
	}
	doctest.WaitClosed(t, s.ports.Replace("127.0.0.1:5888"), 30*time.Second)
}

// runAPIPage runs docs/api.md's error examples in the shell of the README's
// walk-through: each must answer the error the page says.
func runAPIPage(t *testing.T, p *doctest.Page) {
	s := startReadmeShell(t)
	s.run(p.Claim(t, "## Errors", "sh")[0], time.Minute, []string{"InvalidEvent", "InvalidApiVersion"},
		`{"error":{"code":"BadRequest","details":{"code":"InvalidEvent","message":"event at index 0: \"eventType\" is required"}}}`,
		`{"error":{"code":"BadRequest","details":{"code":"InvalidApiVersion","message":"api-version \"2018-01-01\" is not supported on this route; accepted values are 2019-01-01-preview, 2019-01-01."}}}`)
}

// runConsolePage runs "Trying it: a failing subscriber" of docs/console.md:
// a broker with a SAS key and two subscriptions to an address where nothing
// listens, one giving events up at once; then each action with curl, a
// subscriber started on that address before the redrive; then the broker
// and the subscriber stopped.
func runConsolePage(t *testing.T, p *doctest.Page) {
	s := startDocShell(t, "127.0.0.1:8081", doctest.FreeAddr(t))
	b := p.Claim(t, "### Trying it: a failing subscriber", "sh")
	if len(b) != 3 {
		t.Fatalf("console.md's try-out has %d sh blocks, want 3", len(b))
	}
	s.run(b[0], 5*time.Minute, nil, `"name":"shipping"`, `"name":"audit"`, "/console/ and enter the key ")
	out := s.run(b[1], 2*time.Minute, nil, `"moved":3`, `"state":"Paused"`, `"notMoved":[]`, `"purged":3`)
	if i := strings.LastIndex(out, `"deliveryStatus"`); i < 0 || strings.Contains(out[i:], `"Paused"`) {
		t.Fatalf("the resumed subscription still reads Paused:\n%s", out)
	}
	s.run(b[2], time.Minute, nil)
	doctest.WaitClosed(t, s.ports.Replace("127.0.0.1:5888"), 30*time.Second)
}
