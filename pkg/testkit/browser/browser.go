package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// Install is how to get Chromium when it is missing.
const Install = "bash scripts/ci-deps/chromium.sh"

// Names are the names Chromium's executable has in the distributions, in
// the order they are looked for: Debian's first.
var Names = []string{"chromium", "chromium-browser", "google-chrome"}

// Timeout bounds one step run with Do or Eval.
const Timeout = 30 * time.Second

// Browser is a running headless Chromium with one tab. Its methods must be
// called from the goroutine of the test it was started or taken For.
type Browser struct {
	tb testing.TB
	*tab
}

// tab is what every Browser of one Chromium shares.
type tab struct {
	ctx context.Context

	mu         sync.Mutex
	dialogs    []string
	exceptions []string
	errors     []string
}

// For returns the same browser for use in tb, a subtest: its failures
// are tb's.
func (b *Browser) For(tb testing.TB) *Browser {
	return &Browser{tb: tb, tab: b.tab}
}

// Flags are the command-line flags the browser runs with, besides a fresh
// --user-data-dir: headless, without the sandbox (tests often run as root,
// where Chromium's sandbox cannot start), and without any traffic of its
// own (updates, sync, QUIC, name lookups of hosts other than localhost).
var Flags = []chromedp.ExecAllocatorOption{
	chromedp.Headless,
	chromedp.NoSandbox,
	chromedp.DisableGPU,
	chromedp.NoFirstRun,
	chromedp.NoDefaultBrowserCheck,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-domain-reliability", true),
	chromedp.Flag("disable-breakpad", true),
	chromedp.Flag("disable-extensions", true),
	chromedp.Flag("disable-dev-shm-usage", true),
	chromedp.Flag("no-proxy-server", true),
	chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
	chromedp.Flag("password-store", "basic"),
	chromedp.Flag("use-mock-keychain", true),
	chromedp.Flag("force-color-profile", "srgb"),
	chromedp.Flag("font-render-hinting", "none"),
}

// find returns the path of Chromium, or skips the test (fails it under
// CI) naming the installer.
func find(tb testing.TB) string {
	tb.Helper()
	for _, name := range Names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return brokertest.RequireCommand(tb, Names[0], Install)
}

// Start starts Chromium with a blank tab of width x height CSS pixels,
// with Flags and then extra.
func Start(tb testing.TB, width, height int, extra ...chromedp.ExecAllocatorOption) *Browser {
	tb.Helper()
	bin := find(tb)
	dir, err := os.MkdirTemp("", "edgegrid-chromium-")
	if err != nil {
		tb.Fatal(err)
	}
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(bin), chromedp.UserDataDir(dir),
		chromedp.WindowSize(width, height)}, Flags...)
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	b := &Browser{tb: tb, tab: &tab{ctx: ctx}}
	tb.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser's process to end
		removeAll(dir)
	})
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		tb.Fatalf("starting %s: %v", bin, err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		tb.Fatalf("enabling the browser's log: %v", err)
	}
	if err := chromedp.Listen(ctx, b.record); err != nil {
		tb.Fatal(err)
	}
	b.Viewport(width, height)
	return b
}

// removeAll removes the profile. Chromium's helper processes may still
// write there for a moment after the browser stops, so it tries again.
func removeAll(dir string) {
	for range 50 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// record runs on the goroutine that reads the browser's messages: it must
// not run commands itself, so a dialog is dismissed from another one.
func (b *tab) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		b.dialogs = append(b.dialogs, string(e.Type)+": "+e.Message)
		go func() {
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text = d.Exception.Description
		}
		b.exceptions = append(b.exceptions, fmt.Sprintf("%s (%s:%d)", text, d.URL, d.LineNumber+1))
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError && e.Entry.Source != log.EntrySourceNetwork {
			b.errors = append(b.errors, string(e.Entry.Source)+": "+e.Entry.Text)
		}
	}
}

// Dialogs returns the JavaScript dialogs the pages opened, as "type:
// message".
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

// Exceptions returns the pages' uncaught exceptions.
func (b *Browser) Exceptions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.exceptions...)
}

// Errors returns the errors the browser logged (a Content-Security-Policy
// violation among them), other than failed network requests.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Do runs steps in the tab, failing the test on an error.
func (b *Browser) Do(steps ...chromedp.Action[chromedp.Void]) {
	b.tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.tb.Fatalf("browser: %v", err)
	}
}

// Eval evaluates a JavaScript expression in the tab and returns its value.
func Eval[T any](b *Browser, expr string) T {
	b.tb.Helper()
	v, err := TryEval[T](b, expr)
	if err != nil {
		b.tb.Fatalf("browser: evaluating %s: %v", expr, err)
	}
	return v
}

// TryEval is Eval that returns the error instead of failing the test.
func TryEval[T any](b *Browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// Viewport sets the tab's size in CSS pixels.
func (b *Browser) Viewport(width, height int) {
	b.tb.Helper()
	b.Do(chromedp.EmulateViewport(int64(width), int64(height)))
}

// Screenshot saves the whole page, beyond the viewport too, as PNG to
// dir/name.png and returns its path.
func (b *Browser) Screenshot(dir, name string) string {
	b.tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, Timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.tb.Fatalf("browser: screenshot: %v", err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.tb.Fatal(err)
	}
	return p
}

// WaitFor polls a JavaScript expression until it is true, and fails the
// test with what describe evaluates to (a JavaScript expression too, for
// example the page's text) if it is not within timeout.
func (b *Browser) WaitFor(timeout time.Duration, cond, describe string) {
	b.tb.Helper()
	brokertest.Eventually(b.tb, timeout, func() error {
		ok, err := TryEval[bool](b, "Boolean("+cond+")")
		if err == nil && ok {
			return nil
		}
		what, _ := TryEval[string](b, "String("+describe+")")
		if err != nil {
			return fmt.Errorf("%s: %v; %s", cond, err, what)
		}
		return fmt.Errorf("%s is false; %s", cond, what)
	})
}
