package api

import (
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
)

// splitCanonicalise is canonicalise without its fast path: every path
// split and each fixed segment compared.
func splitCanonicalise(p string) string { return rewriteSegments(trimTrailingSlashes(p)) }

func TestCanonicaliseMatchesSplitting(t *testing.T) {
	segs := []string{"", "topics", "TOPICS", "eventSubscriptions", "eventsubscriptions", "events", "EVENTS",
		"api", "API", "History", "READYZ", "x"}
	var paths []string
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		paths = append(paths, p, p+"/", p+"//")
		if depth == 5 {
			return
		}
		for _, s := range segs {
			walk(p+"/"+s, depth+1)
		}
	}
	walk("", 0)
	paths = append(paths, "", "/", "//", "topics", "TOPICS/t")
	for _, p := range paths {
		if got, want := canonicalise(p), splitCanonicalise(p); got != want {
			t.Fatalf("canonicalise(%q) = %q, want %q", p, got, want)
		}
	}
}

func FuzzCanonicalise(f *testing.F) {
	for _, p := range []string{"/topics/t/events", "/Topics/t/API/Events/", "/topics/t/eventSubscriptions/s/history"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if got, want := canonicalise(p), splitCanonicalise(p); got != want {
			t.Fatalf("canonicalise(%q) = %q, want %q", p, got, want)
		}
	})
}

func TestAPIVersionMatchesQueryParam(t *testing.T) {
	queries := []string{
		"", "api-version=2019-01-01", "api-version=", "api-version", "x=1&api-version=2019-01-01",
		"api-version=a&api-version=b", "&&api-version=a", "api-version=a=b", "API-VERSION=a",
		"api-version=2019-01-01%2D", "api%2Dversion=a", "api-version=a+b", "x=1;api-version=a",
		"api-version=a;b", "api-version=%zz&api-version=b", "x&api-version=c&",
	}
	e := echo.New()
	for _, q := range queries {
		r := httptest.NewRequest("GET", "/topics", nil)
		r.URL.RawQuery = q
		c := e.NewContext(r, httptest.NewRecorder())
		got := apiVersion(c)
		want := e.NewContext(r, httptest.NewRecorder()).QueryParam("api-version")
		if got != want {
			t.Errorf("apiVersion for %q = %q, want %q", q, got, want)
		}
	}
}

func TestMediaTypeFastPathMatchesParsing(t *testing.T) {
	e := echo.New()
	for _, ct := range []string{mediaJSON, mediaCloudEvent, mediaCloudEvents} {
		for _, v := range []string{ct, ct + "; charset=utf-8"} {
			r := httptest.NewRequest("POST", "/topics/t/events", nil)
			r.Header.Set(echo.HeaderContentType, v)
			got, err := mediaType(e.NewContext(r, httptest.NewRecorder()))
			// What the general path makes of the same value, written
			// so that the fast path does not take it.
			r.Header.Set(echo.HeaderContentType, " "+v)
			want, wantErr := mediaType(e.NewContext(r, httptest.NewRecorder()))
			if got != want || err != nil || wantErr != nil {
				t.Errorf("mediaType(%q) = %q, %v; parsed %q, %v", v, got, err, want, wantErr)
			}
		}
	}
}
