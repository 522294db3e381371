package browser_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/browser"
)

// The console's tests prove that a page ran nothing by finding no dialog,
// exception or CSP violation: this proves the browser sees each of them.
func TestBrowserRecordsWhatPagesDo(t *testing.T) {
	pages := map[string]string{
		"/alert":  `<script>alert("hello")</script>`,
		"/throw":  `<script>throw new Error("boom")</script>`,
		"/csp":    `<p>x</p><script>document.title = "ran"</script>`,
		"/script": `<p id="p">text</p>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/csp" {
			w.Header().Set("Content-Security-Policy", "script-src 'self'")
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<!doctype html><title>t</title>"+pages[r.URL.Path])
	}))
	defer srv.Close()
	b := browser.Start(t, 800, 600)

	b.Do(chromedp.Navigate(srv.URL + "/alert"))
	waitLen(t, b.Dialogs, 1)
	if d := b.Dialogs(); !strings.Contains(d[0], "hello") {
		t.Errorf("dialogs %q", d)
	}
	b.Do(chromedp.Navigate(srv.URL + "/throw"))
	waitLen(t, b.Exceptions, 1)
	if e := b.Exceptions(); !strings.Contains(e[0], "boom") {
		t.Errorf("exceptions %q", e)
	}
	b.Do(chromedp.Navigate(srv.URL + "/csp"))
	waitLen(t, b.Errors, 1)
	if title := browser.Eval[string](b, "document.title"); title == "ran" {
		t.Error("the inline script ran despite the policy")
	}
	b.Do(chromedp.Navigate(srv.URL + "/script"))
	if got := browser.Eval[string](b, "document.getElementById('p').textContent"); got != "text" {
		t.Errorf("Eval = %q", got)
	}
}

func waitLen(t *testing.T, f func() []string, n int) {
	t.Helper()
	brokertest.Eventually(t, 10*time.Second, func() error {
		if got := f(); len(got) < n {
			return fmt.Errorf("recorded %q, want %d entries", got, n)
		}
		return nil
	})
}
