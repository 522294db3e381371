package testpki_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// TestWorkloadServer checks the daemon behaviour the client tests do not
// reach: requests the client never sends.
func TestWorkloadServer(t *testing.T) {
	ws := testpki.NewWorkloadServer(t, testpki.NewCA(t, "root"))
	sock := strings.TrimPrefix(ws.URI(), "unix://")
	httpc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
	serverPath := "/modules/" + testpki.WorkloadModuleID + "/genid/" + testpki.WorkloadGenerationID + "/certificate/server"
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	tests := []struct {
		name        string
		method      string
		target      string
		body        string
		wantStatus  int
		wantMessage string
	}{
		{"MissingAPIVersion", "GET", "/trust-bundle", "", 400, "api-version not specified"},
		{"BadAPIVersion", "GET", "/trust-bundle?api-version=latest", "", 400, "invalid api-version"},
		{"NewerAPIVersion", "GET", "/trust-bundle?api-version=2020-07-07", "", 200, ""},
		{"WrongMethod", "POST", "/trust-bundle?api-version=2019-01-30", "", 405, "method not allowed"},
		{"UnknownPath", "GET", "/modules?api-version=2019-01-30", "", 404, "not found"},
		{"EscapedModule", "POST", "/modules/eventgrid%2Fmodule/certificate/identity?api-version=2019-01-30", "{}", 404, "module not found"},
		{"NoCommonName", "POST", serverPath + "?api-version=2019-01-30", `{"expiration":"` + future + `"}`, 400, "commonName"},
		{"BadExpiration", "POST", serverPath + "?api-version=2019-01-30", `{"commonName":"x","expiration":"soon"}`, 400, "invalid expiration"},
		{"BadBody", "POST", serverPath + "?api-version=2019-01-30", `{`, 400, "invalid request body"},
		{"IdentityWithoutExpiration", "POST", "/modules/" + testpki.WorkloadModuleID + "/certificate/identity?api-version=2019-01-30", `{}`, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, "http://localhost"+tt.target, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			res, err := httpc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			data, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d (%s), want %d", res.StatusCode, data, tt.wantStatus)
			}
			if tt.wantMessage == "" {
				return
			}
			var e struct{ Message string }
			if err := json.Unmarshal(data, &e); err != nil || !strings.Contains(e.Message, tt.wantMessage) {
				t.Fatalf("body = %s, want a message containing %q", data, tt.wantMessage)
			}
		})
	}
}
