package tests_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestConsole_Served: a broker started without any console__ key serves
// the page at /console/ with no credential, with headers that forbid
// inline or foreign script, framing and sniffing, while the data routes
// still ask for one.
func TestConsole_Served(t *testing.T) {
	t.Parallel()
	const key = "Y29uc29sZS10ZXN0LWtleS0xMjM0NTY3ODkw"
	b := startBroker(t, merge(devEnv(),
		"inbound__clientAuth__sasKeys__enabled", "true",
		"inbound__clientAuth__sasKeys__key1", key))
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	code, h, _ := do(t, noRedirect, http.MethodGet, b.URL+"/console", "", nil)
	if code != http.StatusMovedPermanently || h.Get("Location") != "/console/" {
		t.Errorf("GET /console = %d, Location %q; want 301 to /console/", code, h.Get("Location"))
	}
	for path, wantType := range map[string]string{
		"/console/":              "text/html",
		"/console/index.html":    "text/html",
		"/console/js/main.js":    "text/javascript",
		"/console/console.css":   "text/css",
		"/console/favicon.svg":   "image/svg+xml",
		"/console/js/api.js":     "text/javascript",
		"/console/js/topic.js":   "text/javascript",
		"/console/js/chart.js":   "text/javascript",
		"/console/js/widgets.js": "text/javascript",
	} {
		code, h, body := do(t, nil, http.MethodGet, b.URL+path, "", nil)
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), wantType) || len(body) == 0 {
			t.Errorf("GET %s = %d %q (%d bytes), want 200 %s", path, code, h.Get("Content-Type"), len(body), wantType)
		}
		checkConsoleHeaders(t, path, h)
	}
	code, h, _ = do(t, nil, http.MethodGet, b.URL+"/console/nothing.js", "", nil)
	if code != http.StatusNotFound {
		t.Errorf("GET /console/nothing.js = %d, want 404", code)
	}
	checkConsoleHeaders(t, "/console/nothing.js", h)
	if code, _, _ := do(t, nil, http.MethodPost, b.URL+"/console/", "", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /console/ = %d, want 405", code)
	}
	if code, _, body := do(t, nil, http.MethodHead, b.URL+"/console/", "", nil); code != http.StatusOK || len(body) != 0 {
		t.Errorf("HEAD /console/ = %d with %d bytes, want 200 and no body", code, len(body))
	}
	// The page's files hold no data; the data does need the key.
	if code, _, _ := do(t, nil, http.MethodGet, b.URL+"/topics?"+apiVersion, "", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /topics without the key = %d, want 401", code)
	}
	// A revalidation costs no body.
	_, h, _ = do(t, nil, http.MethodGet, b.URL+"/console/js/main.js", "", nil)
	if code, _, _ := do(t, nil, http.MethodGet, b.URL+"/console/js/main.js", "", nil, "If-None-Match", h.Get("ETag")); code != http.StatusNotModified {
		t.Errorf("GET main.js with its ETag = %d, want 304", code)
	}
}

func checkConsoleHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("%s: Content-Security-Policy %q lacks %s", path, csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "*") {
		t.Errorf("%s: Content-Security-Policy %q allows too much", path, csp)
	}
	if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: X-Frame-Options %q, X-Content-Type-Options %q", path, h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"))
	}
	if h.Get("Set-Cookie") != "" {
		t.Errorf("%s sets a cookie", path)
	}
}
