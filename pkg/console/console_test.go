package console_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/console"
)

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

func TestHandler(t *testing.T) {
	h := console.New()
	t.Run("Page", func(t *testing.T) {
		w := get(t, h, http.MethodGet, "/console/")
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `<script type="module" src="js/main.js">`) {
			t.Fatalf("GET /console/ = %d:\n%s", w.Code, w.Body)
		}
		if got := w.Header().Get("Content-Type"); got != "text/html; charset=utf-8" {
			t.Errorf("Content-Type %q", got)
		}
	})
	t.Run("Redirect", func(t *testing.T) {
		w := get(t, h, http.MethodGet, "/console")
		if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/console/" {
			t.Errorf("GET /console = %d to %q", w.Code, w.Header().Get("Location"))
		}
	})
	t.Run("Headers", func(t *testing.T) {
		for _, path := range []string{"/console/", "/console", "/console/js/main.js", "/console/missing"} {
			w := get(t, h, http.MethodGet, path)
			hd := w.Header()
			if hd.Get("Content-Security-Policy") != console.ContentSecurityPolicy || hd.Get("X-Frame-Options") != "DENY" ||
				hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("%s: headers %v", path, hd)
			}
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		for _, path := range []string{"/console/missing.js", "/console/../go.mod", "/consolex", "/console/static/index.html"} {
			if w := get(t, h, http.MethodGet, path); w.Code != http.StatusNotFound {
				t.Errorf("GET %s = %d, want 404", path, w.Code)
			}
		}
	})
	t.Run("Methods", func(t *testing.T) {
		if w := get(t, h, http.MethodPost, "/console/"); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("POST = %d, Allow %q", w.Code, w.Header().Get("Allow"))
		}
		if w := get(t, h, http.MethodHead, "/console/"); w.Code != http.StatusOK || w.Body.Len() != 0 {
			t.Errorf("HEAD = %d with %d bytes", w.Code, w.Body.Len())
		}
	})
	t.Run("ETag", func(t *testing.T) {
		etag := get(t, h, http.MethodGet, "/console/console.css").Header().Get("ETag")
		r := httptest.NewRequest(http.MethodGet, "/console/console.css", nil)
		r.Header.Set("If-None-Match", etag)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if etag == "" || w.Code != http.StatusNotModified {
			t.Errorf("ETag %q, revalidation %d", etag, w.Code)
		}
	})
}

// TestSize keeps the page well within the 400 KiB it may add to the
// binary.
func TestSize(t *testing.T) {
	if n := console.New().Size(); n > 200<<10 {
		t.Errorf("the page's files take %d bytes, over 200 KiB", n)
	}
}

// TestNoMarkupFromData checks the sources for what would let data become
// markup or code: the page builds every element with the DOM and sets
// strings as text.
func TestNoMarkupFromData(t *testing.T) {
	banned := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(['"]on|javascript:`)
	inline := regexp.MustCompile(`(?i)<script>|<script [^>]*>[^<]|\son[a-z]+=|style=|<style`)
	err := filepath.WalkDir("static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".js":
			for _, line := range strings.Split(string(b), "\n") {
				if banned.MatchString(line) && !strings.Contains(line, "is never set") {
					t.Errorf("%s: %s", p, strings.TrimSpace(line))
				}
			}
		case ".html":
			if m := inline.FindString(string(b)); m != "" {
				t.Errorf("%s has inline script or style: %q", p, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
