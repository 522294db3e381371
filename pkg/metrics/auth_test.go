package metrics_test

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/metrics"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// eventgrid_auth_failures_total has a series per kind of failure from the
// start, and counts each refusal under its kind.
func TestPrometheus_AuthFailures(t *testing.T) {
	p := metrics.NewPrometheus()
	s := MustScrape(t, p.Handler())
	for _, r := range auth.FailureKinds {
		if v, ok := s.value("eventgrid_auth_failures_total", "reason", r); !ok || v != 0 {
			t.Errorf("reason %s: %v, %v; want a series at 0", r, v, ok)
		}
	}
	for _, tt := range []struct {
		reason string
		n      int
	}{{auth.FailSASKey, 3}, {auth.FailNoCredentials, 1}, {auth.FailClientCertificate, 2}} {
		for range tt.n {
			p.AuthFailed(tt.reason)
		}
	}
	s = MustScrape(t, p.Handler())
	for r, want := range map[string]float64{auth.FailSASKey: 3, auth.FailNoCredentials: 1, auth.FailClientCertificate: 2, auth.FailSASToken: 0} {
		if v, _ := s.value("eventgrid_auth_failures_total", "reason", r); v != want {
			t.Errorf("reason %s = %v, want %v", r, v, want)
		}
	}
}

// The console's broker line counts the authentication failures of the
// interval, whatever their kind.
func TestConsole_AuthFailures(t *testing.T) {
	buf := &logbuf.Buffer{}
	c := metrics.NewConsole(time.Hour, zerolog.New(buf))
	for _, n := range []int{3, 0, 2} {
		for range n {
			c.AuthFailed(auth.FailSASKey)
		}
		if n > 0 {
			c.AuthFailed(auth.FailSASToken)
			n++
		}
		c.Report()
		lines := byMessage(buf.Take(t))["broker metrics"]
		if len(lines) != 1 || lines[0]["authFailures"] != float64(n) {
			t.Errorf("broker lines %v, want one with authFailures %d", lines, n)
		}
	}
}
