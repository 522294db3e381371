package api_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/auth"
)

// The console page is served as it is given, below /console, with no
// credential asked even where every other route asks for one; its paths
// are file paths, which the API's path canonicalisation leaves alone.
func TestConsoleRoute(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "page "+r.Method+" "+r.URL.Path)
	})
	ts := MustOpenServer(t, withServices(func(o *api.Services) {
		o.Console = page
		o.Authenticator = auth.New(auth.Options{SASKeysEnabled: true, Key1: "a2V5LW9uZS0xMjM0NTY3ODkwMTIzNDU2"})
	}))
	for path, want := range map[string]string{
		"/console":            "page GET /console",
		"/console/":           "page GET /console/",
		"/console/js/main.js": "page GET /console/js/main.js",
		"/console/Topics/":    "page GET /console/Topics/",
	} {
		r := ts.doVersion(t, http.MethodGet, path, "", "", nil)
		if r.Status != http.StatusOK || string(r.Body) != want {
			t.Errorf("GET %s = %d %q, want 200 %q", path, r.Status, r.Body, want)
		}
	}
	if r := ts.doVersion(t, http.MethodHead, "/console/", "", "", nil); r.Status != http.StatusOK {
		t.Errorf("HEAD /console/ = %d", r.Status)
	}
	mustStatus(t, ts.do(t, http.MethodGet, "/topics", "", nil), http.StatusUnauthorized)
	mustError(t, ts.doVersion(t, http.MethodPost, "/console/", "", "", nil), http.StatusMethodNotAllowed, "MethodNotAllowed")
}

// Without a console handler, /console is no route of the API.
func TestConsoleRoute_Off(t *testing.T) {
	ts := MustOpenServer(t)
	mustError(t, ts.doVersion(t, http.MethodGet, "/console/", "", "", nil), http.StatusNotFound, "NotFound")
}
