package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edgegrid/edgegrid/pkg/config"
)

// healthcheckTimeout bounds one probe, connection and TLS handshake
// included. The image's HEALTHCHECK allows a little more.
const healthcheckTimeout = 3 * time.Second

// healthcheck runs `edgegrid healthcheck`, the container's HEALTHCHECK: it
// reads the same configuration as the broker and calls GET /healthz on the
// broker's own loopback listener. It prints one line and returns the exit
// status: 0 when /healthz answered 200, 1 otherwise (Docker reserves 2).
func healthcheck(args []string) int {
	return runHealthcheck(args, os.Stdout, os.Stderr, healthcheckTimeout)
}

// runHealthcheck is healthcheck with its outputs and timeout as parameters:
// the healthy line goes to stdout, any other line to stderr.
func runHealthcheck(args []string, stdout, stderr io.Writer, timeout time.Duration) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "unhealthy: usage: edgegrid healthcheck (no arguments; got %q)\n", args)
		return 1
	}
	cfg, err := config.Load()
	if err != nil {
		fmt.Fprintln(stderr, "unhealthy: configuration error:", oneLine(err))
		return 1
	}
	target, err := healthURL(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "unhealthy:", err)
		return 1
	}
	status, err := probe(target, timeout)
	if err != nil {
		fmt.Fprintf(stderr, "unhealthy: GET %s: %s\n", target, oneLine(err))
		return 1
	}
	if status != http.StatusOK {
		fmt.Fprintf(stderr, "unhealthy: GET %s answered %d %s\n", target, status, http.StatusText(status))
		return 1
	}
	fmt.Fprintf(stdout, "healthy: GET %s answered 200 OK\n", target)
	return 0
}

// healthURL picks the listener to probe: plain HTTP on api__httpPort when
// the HTTP listener runs (tlsPolicy enabled or disabled), else HTTPS on
// api__httpsPort. The host is api__bindAddress when that names one address,
// else 127.0.0.1. It fails when the probe is switched off or the port is 0,
// since a port chosen at start cannot be known from outside the process.
func healthURL(cfg config.Config) (string, error) {
	if !cfg.HealthProbeEnabled {
		return "", errors.New("the health probe is disabled (api__health__httpProbe__enabled=false), so /healthz is not served")
	}
	scheme, port, key := "https", cfg.HTTPSPort, "api__httpsPort"
	if cfg.TLSPolicy == config.TLSEnabled || cfg.TLSPolicy == config.TLSDisabled {
		scheme, port, key = "http", cfg.HTTPPort, "api__httpPort"
	}
	if port == 0 {
		return "", fmt.Errorf("%s is 0 (any free port), so the health check cannot know where the broker listens; set a fixed port", key)
	}
	host := "127.0.0.1"
	if ip := net.ParseIP(cfg.BindAddress); cfg.BindAddress != "" && (ip == nil || !ip.IsUnspecified()) {
		host = cfg.BindAddress
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/healthz", nil
}

// probe sends one GET to target and returns the response status. It
// ignores proxy settings and, for HTTPS, skips certificate verification
// and presents no client certificate: the target is the container's own
// listener on loopback, and /healthz needs no authentication.
func probe(target string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", "edgegrid-healthcheck/"+version)
	client := &http.Client{
		Transport: &http.Transport{
			Proxy:             nil,
			DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{
				InsecureSkipVerify: true, // #nosec G402 -- the broker's own loopback listener
				MinVersion:         tls.VersionTLS12,
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the caller already names the method and URL
		}
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

// oneLine keeps a possibly multi-line error (config.Load joins several) on
// one output line.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
