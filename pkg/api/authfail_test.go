package api_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// authMetrics records AuthFailed calls.
type authMetrics struct {
	mu     sync.Mutex
	counts map[string]int
}

func (m *authMetrics) Published(string, int, time.Duration, int, int) {}
func (m *authMetrics) TopicDeleted(string)                            {}
func (m *authMetrics) Rejected(string)                                {}
func (m *authMetrics) AuthFailed(reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[reason]++
}

// untyped is an authenticator whose refusals do not say their kind.
type untyped struct{}

func (untyped) Check(*http.Request) (auth.Grant, string, error) {
	return auth.Grant{}, "refused", errors.New("no")
}

// Every refused request is counted under its kind; the log gets one line
// per interval, naming the kind and never the credential.
func TestAuthFailures_CountedAndLogRateLimited(t *testing.T) {
	const secret = "c2VjcmV0IGtleSB0aGF0IG11c3Qgbm90IGxlYWs="
	const wrongKey = "d3Jvbmcga2V5IHRoYXQgbXVzdCBub3QgbGVhaw=="
	for _, tt := range []struct {
		name   string
		authn  api.Authenticator
		header []string
		want   string
	}{
		{"NoCredentials", auth.New(auth.Options{SASKeysEnabled: true, Key1: secret}), nil, auth.FailNoCredentials},
		{"WrongKey", auth.New(auth.Options{SASKeysEnabled: true, Key1: secret}), []string{auth.HeaderSASKey, wrongKey}, auth.FailSASKey},
		{"BadToken", auth.New(auth.Options{SASKeysEnabled: true, Key1: secret}), []string{auth.HeaderSASToken, "r=x&e=y&s=z"}, auth.FailSASToken},
		{"KindUnknown", untyped{}, nil, api.UnknownAuthFailure},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &authMetrics{counts: map[string]int{}}
			logs := &logbuf.Buffer{}
			opts := api.DefaultOptions()
			opts.AuthFailureLogInterval = time.Hour
			srv := newServer(opts, api.Services{Authenticator: tt.authn, Metrics: m}, zerolog.New(logs))
			addr, err := srv.Open("127.0.0.1:0", nil)
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Timeout: 10 * time.Second}
			t.Cleanup(func() { client.CloseIdleConnections(); _ = srv.Close(t.Context()) })
			const n = 5
			for range n {
				req, _ := http.NewRequest(http.MethodGet, "http://"+addr.String()+"/topics?api-version="+edgeVersion, nil)
				req.Header.Set("X-Forwarded-For", "203.0.113.9")
				for i := 0; i+1 < len(tt.header); i += 2 {
					req.Header.Set(tt.header[i], tt.header[i+1])
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401", resp.StatusCode)
				}
			}
			m.mu.Lock()
			if m.counts[tt.want] != n || len(m.counts) != 1 {
				t.Errorf("counted %v, want %d under %s", m.counts, n, tt.want)
			}
			m.mu.Unlock()
			lines := logs.Messages(t, "request refused: not authenticated")
			if len(lines) != 1 {
				t.Fatalf("%d log lines for %d refusals within the interval, want 1: %v", len(lines), n, lines)
			}
			l := lines[0]
			if l["level"] != "warn" || l["reason"] != tt.want || l["path"] != "/topics" || l["suppressedSinceLastLine"] != 0.0 || l["remote"] != "127.0.0.1" {
				t.Errorf("log line %v, want a warning with reason %s, path /topics, suppressedSinceLastLine 0 and the peer's address (not X-Forwarded-For)", l, tt.want)
			}
			if all := logs.String(); strings.Contains(all, secret) || strings.Contains(all, wrongKey) {
				t.Errorf("a key reached the log: %s", all)
			}
		})
	}
}
