package api_test

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// endpointBase is the base of the topic endpoints of a test server with the
// default public host.
func endpointBase(ts *testServer) string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))
	return "http://" + api.DefaultPublicHost + ":" + port
}

// rawEndpoint sends a raw HTTP/1.1 request for a topic with the given
// request target and Host header lines and returns the endpoint answered.
func rawEndpoint(t *testing.T, addr, method, target, hostLines string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := method + " " + target + " HTTP/1.1\r\n" + hostLines + "Connection: close\r\n"
	if method == http.MethodPut {
		req += "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	} else {
		req += "\r\n"
	}
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Properties struct {
			Endpoint string `json:"endpoint"`
		} `json:"properties"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s with %q: status %d", method, target, hostLines, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Properties.Endpoint
}

// A topic's endpoint is built from the configured public host and the
// listener's port, whatever Host the client sent.
func TestTopicEndpoint_NeverFromHost(t *testing.T) {
	const path = "/topics/t"
	const query = "?api-version=" + edgeVersion
	for _, tt := range []struct {
		name, publicHost, want string // want: "<port>" is the listener's port
	}{
		{"Default", "", "http://eventgridmodule:<port>"},
		{"ModuleName", "mymodule", "http://mymodule:<port>"},
		{"HostWithPort", "gateway.example:443", "http://gateway.example:443"},
		{"IPv4", "10.1.2.3", "http://10.1.2.3:<port>"},
		{"IPv6", "[fd00::4]", "http://[fd00::4]:<port>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := MustOpenServer(t, withAPI(func(o *api.Options) { o.PublicHost = tt.publicHost }))
			addr := strings.TrimPrefix(ts.URL, "http://")
			_, port, _ := net.SplitHostPort(addr)
			want := strings.Replace(tt.want, "<port>", port, 1) + path + "/events" + query
			for _, req := range []struct{ method, target, host string }{
				{http.MethodPut, path + query, "Host: evil.example\r\n"},
				{http.MethodGet, path + query, "Host: evil.example:666\r\n"},
				{http.MethodGet, path + query, "Host: \r\n"},
				{http.MethodGet, path + query, "Host: " + addr + "\r\n"},
				{http.MethodGet, "http://evil.example" + path + query, "Host: evil.example\r\n"},
			} {
				if got := rawEndpoint(t, addr, req.method, req.target, req.host); got != want {
					t.Errorf("%s %s with %q: endpoint %s, want %s", req.method, req.target, req.host, got, want)
				}
			}
			r := ts.do(t, http.MethodGet, "/topics", "", nil)
			mustStatus(t, r, http.StatusOK)
			for _, tp := range mustArray(t, r.Body) {
				if got := at(tp, "properties.endpoint"); got != want {
					t.Errorf("listed endpoint %v, want %s", got, want)
				}
			}
		})
	}
}

// With an HTTPS listener, endpoints name https and its port, also for
// requests that came over plain HTTP.
func TestTopicEndpoint_PrefersHTTPSListener(t *testing.T) {
	ca := testpki.NewCA(t, "ca")
	cert := ca.Issue(t, "eventgridmodule", []string{"eventgridmodule"}, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(time.Hour))
	opts := api.DefaultOptions()
	srv := newServer(opts, api.Services{}, zerolog.Nop())
	plain, err := srv.Open("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	secure, err := srv.Open("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(t.Context()) })
	_, port, _ := net.SplitHostPort(secure.String())
	want := "https://eventgridmodule:" + port + "/topics/t/events?api-version=" + edgeVersion
	if got := rawEndpoint(t, plain.String(), http.MethodPut, "/topics/t?api-version="+edgeVersion, "Host: evil.example\r\n"); got != want {
		t.Errorf("endpoint %s, want %s", got, want)
	}
}
