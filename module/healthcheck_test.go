package main

// These tests are in package main because a command cannot be imported by an
// external test package.

import (
	"bytes"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/config"
)

func TestHealthcheck(t *testing.T) {
	healthz := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/healthz" || r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
				http.Error(w, "the probe presented a client certificate", http.StatusInternalServerError)
				return
			}
			w.WriteHeader(status)
		}
	}
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

	tests := []struct {
		name    string
		server  string // "http", "https", "closed" or "" (none)
		handler http.HandlerFunc
		env     []string // keys and values; "{port}" stands for the server's port
		args    []string
		want    int
		wantOut string // in stdout when want is 0, else in stderr
	}{
		{
			name: "HTTPWhenTLSDisabled", server: "http", handler: healthz(http.StatusOK),
			env:  []string{"inbound__serverAuth__tlsPolicy", "disabled", "api__httpPort", "{port}"},
			want: 0, wantOut: "healthy: GET http://127.0.0.1:{port}/healthz answered 200 OK",
		},
		{
			name: "HTTPWhenTLSEnabled", server: "http", handler: healthz(http.StatusOK),
			env:  []string{"inbound__serverAuth__tlsPolicy", "enabled", "api__httpPort", "{port}", "api__httpsPort", "1"},
			want: 0, wantOut: "http://127.0.0.1:{port}/healthz",
		},
		{
			name: "HTTPSWhenStrictByDefault", server: "https", handler: healthz(http.StatusOK),
			env:  []string{"api__httpsPort", "{port}", "api__httpPort", "1"},
			want: 0, wantOut: "healthy: GET https://127.0.0.1:{port}/healthz answered 200 OK",
		},
		{
			name: "UnspecifiedBindAddressProbesLoopback", server: "http", handler: healthz(http.StatusOK),
			env:  []string{"inbound__serverAuth__tlsPolicy", "disabled", "api__httpPort", "{port}", "api__bindAddress", "0.0.0.0"},
			want: 0, wantOut: "http://127.0.0.1:{port}/healthz",
		},
		{
			name: "BindAddressIsProbed", server: "http", handler: healthz(http.StatusOK),
			env:  []string{"inbound__serverAuth__tlsPolicy", "disabled", "api__httpPort", "{port}", "api__bindAddress", "127.0.0.1"},
			want: 0, wantOut: "http://127.0.0.1:{port}/healthz",
		},
		{
			name: "Not200", server: "http", handler: healthz(http.StatusServiceUnavailable),
			env:  []string{"inbound__serverAuth__tlsPolicy", "disabled", "api__httpPort", "{port}"},
			want: 1, wantOut: "unhealthy: GET http://127.0.0.1:{port}/healthz answered 503 Service Unavailable",
		},
		{
			name: "HTTPSNot200", server: "https", handler: healthz(http.StatusInternalServerError),
			env:  []string{"inbound__serverAuth__tlsPolicy", "strict", "api__httpsPort", "{port}"},
			want: 1, wantOut: "answered 500",
		},
		{
			name: "NothingListening", server: "closed",
			env:  []string{"inbound__serverAuth__tlsPolicy", "disabled", "api__httpPort", "{port}"},
			want: 1, wantOut: "unhealthy: GET http://127.0.0.1:{port}/healthz: dial tcp 127.0.0.1:{port}: ",
		},
		{
			name: "HTTPSProbeOnHTTPListener", server: "http", handler: healthz(http.StatusOK),
			env:  []string{"inbound__serverAuth__tlsPolicy", "strict", "api__httpsPort", "{port}"},
			want: 1, wantOut: "unhealthy: GET https://127.0.0.1:{port}/healthz: ",
		},
		{
			name: "Timeout", server: "http", handler: hang,
			env:  []string{"inbound__serverAuth__tlsPolicy", "disabled", "api__httpPort", "{port}"},
			want: 1, wantOut: "context deadline exceeded",
		},
		{
			name: "ProbeDisabled",
			env:  []string{"inbound__serverAuth__tlsPolicy", "disabled", "api__health__httpProbe__enabled", "false"},
			want: 1, wantOut: "unhealthy: the health probe is disabled",
		},
		{
			name: "PortZero",
			env:  []string{"inbound__serverAuth__tlsPolicy", "disabled", "api__httpPort", "0"},
			want: 1, wantOut: "unhealthy: api__httpPort is 0",
		},
		{
			name: "HTTPSPortZero",
			env:  []string{"api__httpsPort", "0"},
			want: 1, wantOut: "unhealthy: api__httpsPort is 0",
		},
		{
			name: "ConfigurationError",
			env:  []string{"inbound__serverAuth__tlsPolicy", "strikt"},
			want: 1, wantOut: "unhealthy: configuration error: invalid value \"strikt\" for inbound__serverAuth__tlsPolicy",
		},
		{
			name: "Arguments", args: []string{"--port", "5888"},
			env:  nil,
			want: 1, wantOut: "unhealthy: usage: edgegrid healthcheck",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port := "1"
			switch tt.server {
			case "http", "https":
				port = MustServe(t, tt.server == "https", tt.handler)
			case "closed":
				port = MustClosedPort(t)
			}
			env := slices.Clone(tt.env)
			for i := 1; i < len(env); i += 2 {
				env[i] = strings.ReplaceAll(env[i], "{port}", port)
			}
			MustSetenv(t, env...)

			var stdout, stderr bytes.Buffer
			got := runHealthcheck(tt.args, &stdout, &stderr, 500*time.Millisecond)
			if got != tt.want {
				t.Fatalf("exit status %d, want %d; stdout %q, stderr %q", got, tt.want, stdout.String(), stderr.String())
			}
			out, quiet := stdout.String(), stderr.String()
			if tt.want != 0 {
				out, quiet = quiet, out
			}
			if want := strings.ReplaceAll(tt.wantOut, "{port}", port); !strings.Contains(out, want) {
				t.Errorf("output %q does not contain %q", out, want)
			}
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Errorf("output %q is not exactly one line", out)
			}
			if quiet != "" {
				t.Errorf("unexpected output on the other stream: %q", quiet)
			}
		})
	}
}

func TestHealthURL(t *testing.T) {
	base := config.Config{HealthProbeEnabled: true, HTTPPort: 5888, HTTPSPort: 4438}
	with := func(f func(*config.Config)) config.Config { c := base; f(&c); return c }
	tests := []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"Strict", with(func(c *config.Config) { c.TLSPolicy = config.TLSStrict }), "https://127.0.0.1:4438/healthz"},
		{"Enabled", with(func(c *config.Config) { c.TLSPolicy = config.TLSEnabled }), "http://127.0.0.1:5888/healthz"},
		{"Disabled", with(func(c *config.Config) { c.TLSPolicy = config.TLSDisabled }), "http://127.0.0.1:5888/healthz"},
		{"IPv6Unspecified", with(func(c *config.Config) { c.TLSPolicy = config.TLSStrict; c.BindAddress = "::" }), "https://127.0.0.1:4438/healthz"},
		{"IPv6Loopback", with(func(c *config.Config) { c.TLSPolicy = config.TLSStrict; c.BindAddress = "::1" }), "https://[::1]:4438/healthz"},
		{"HostName", with(func(c *config.Config) { c.TLSPolicy = config.TLSDisabled; c.BindAddress = "localhost" }), "http://localhost:5888/healthz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := healthURL(tt.cfg)
			if err != nil || got != tt.want {
				t.Fatalf("healthURL() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// MustServe starts an HTTP or HTTPS test server on 127.0.0.1 that asks for,
// but does not require, a client certificate, and returns its port.
func MustServe(tb testing.TB, useTLS bool, h http.Handler) string {
	tb.Helper()
	srv := httptest.NewUnstartedServer(h)
	if useTLS {
		srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
		srv.StartTLS()
	} else {
		srv.Start()
	}
	tb.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return u.Port()
}

// MustClosedPort returns a loopback port that nothing listens on.
func MustClosedPort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return strconv.Itoa(port)
}

// MustSetenv sets each key to its value for the rest of the test.
func MustSetenv(tb testing.TB, kv ...string) {
	tb.Helper()
	if len(kv)%2 != 0 {
		tb.Fatalf("MustSetenv: odd number of arguments %q", kv)
	}
	for i := 0; i < len(kv); i += 2 {
		tb.Setenv(kv[i], kv[i+1])
	}
}
