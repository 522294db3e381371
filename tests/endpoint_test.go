package tests_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
)

// topicEndpoint sends method to the topic t with the given Host header and
// returns properties.endpoint of the answer.
func topicEndpoint(t *testing.T, base, method, host string) string {
	t.Helper()
	var body *strings.Reader
	if method == http.MethodPut {
		body = strings.NewReader(`{"properties":{}}`)
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, base+"/topics/t?"+apiVersion, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s /topics/t with Host %s = %d", method, host, resp.StatusCode)
	}
	var out struct {
		Properties struct{ Endpoint string } `json:"properties"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Properties.Endpoint
}

// A topic's endpoint names the configured public host (else the module
// name) and the listener's port, never the Host a client sent.
func TestTopicEndpoint_FromConfiguration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		env  map[string]string
		host string // of the endpoint, before the listener's port
	}{
		{"ModuleNameByDefault", devEnv(), "eventgridmodule"},
		{"PublicHost", merge(devEnv(), "api__publicHost", "gateway.example"), "gateway.example"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := startBroker(t, tt.env)
			_, port, _ := net.SplitHostPort(strings.TrimPrefix(b.URL, "http://"))
			want := "http://" + tt.host + ":" + port + "/topics/t/events?" + apiVersion
			for _, c := range []struct{ method, host string }{
				{http.MethodPut, "evil.example"},
				{http.MethodGet, "evil.example:8443"},
				{http.MethodGet, strings.TrimPrefix(b.URL, "http://")},
			} {
				if got := topicEndpoint(t, b.URL, c.method, c.host); got != want {
					t.Errorf("%s with Host %s: endpoint %s, want %s", c.method, c.host, got, want)
				}
			}
		})
	}
}

// A public host that is not a host[:port] stops the broker at start with a
// message naming the key.
func TestTopicEndpoint_BadPublicHostRefused(t *testing.T) {
	t.Parallel()
	code, out := runToExit(t, merge(devEnv(), "api__publicHost", "https://gateway.example/"))
	if code == 0 || !strings.Contains(out, "api__publicHost") {
		t.Fatalf("exit %d, output %s; want a failure naming api__publicHost", code, out)
	}
}
