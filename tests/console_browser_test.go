package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/edgegrid/edgegrid/pkg/testkit/browser"
)

// hostile is text that would run script if a page put it in as markup.
const hostile = `<img src=x onerror=alert(1)>`

// The two sizes every view is looked at in: a laptop, and a phone.
var consoleSizes = []struct {
	name          string
	width, height int
}{{"laptop", 1366, 768}, {"narrow", 390, 844}}

// consoleScene is a broker with SAS keys, a topic whose subscriptions
// succeed and fail, a CloudEvents topic with a queue subscription, and a
// browser.
type consoleScene struct {
	t       *testing.T
	b       *broker
	page    string // where the browser opens the console: the broker's URL
	key     string
	ok, bad *sink
	fixed   *atomic.Bool // the bad sink answers 200 from then on
	browser *browser.Browser
	shots   string // where screenshots go
}

func newConsoleScene(t *testing.T) *consoleScene {
	c := newBareScene(t)
	c.ok = newSink(t, nil)
	c.bad = newSink(t, func(int, *http.Request) int {
		if c.fixed.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	c.mgmt(http.MethodPut, "/topics/orders", map[string]any{"properties": map[string]any{"inputSchema": "EventGridSchema"}})
	c.mgmt(http.MethodPut, "/topics/orders/eventSubscriptions/billing", map[string]any{"properties": map[string]any{
		"destination": webhookDest(c.ok.URL + "/api/orders?code=secret-in-query"),
	}})
	// A string from a resource, which the page shows: as text, never markup.
	c.mgmt(http.MethodPut, "/topics/orders/eventSubscriptions/shipping", map[string]any{"properties": map[string]any{
		"destination": webhookDest(c.bad.URL+"/hook", "deliveryAttributeMappings", []any{map[string]any{
			"name": "X-Note", "type": "Static", "properties": map[string]any{"value": hostile, "isSecret": false}}}),
	}})
	c.mgmt(http.MethodPut, "/topics/telemetry", map[string]any{"properties": map[string]any{"inputSchema": "CloudEventSchemaV1_0"}})
	c.mgmt(http.MethodPut, "/topics/telemetry/eventSubscriptions/reader", map[string]any{"properties": queueProps(nil)})
	return c
}

// newBareScene is a browser and a broker with a SAS key and the settings
// env (name, value pairs), holding nothing yet.
func newBareScene(t *testing.T, env ...string) *consoleScene {
	c := &consoleScene{t: t, key: "Y29uc29sZS1icm93c2VyLWtleS0xMjM0NTY=", fixed: &atomic.Bool{}}
	c.browser = browser.Start(t, consoleSizes[0].width, consoleSizes[0].height)
	c.shots = os.Getenv("CONSOLE_SCREENSHOTS")
	if c.shots == "" {
		c.shots = t.TempDir()
	} else if err := os.MkdirAll(c.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", c.shots)
	c.b = startBroker(t, merge(devEnv(), append([]string{
		"inbound__clientAuth__sasKeys__enabled", "true",
		"inbound__clientAuth__sasKeys__key1", c.key}, env...)...))
	return c
}

// enterKey opens the overview and gives the key prompt the key.
func (c *consoleScene) enterKey() {
	c.t.Helper()
	c.navigate("")
	c.waitText("!document.getElementById('auth').hidden")
	c.browser.Do(chromedp.SendKeys(chromedp.ID("auth-key"), c.key), chromedp.Click(chromedp.CSS("#auth-form button")))
	c.waitText("document.getElementById('auth').hidden && document.body.dataset.loaded === 'true'")
}

// mgmt calls the API with the key and fails the test unless it answers 200.
func (c *consoleScene) mgmt(method, path string, body any) []byte {
	c.t.Helper()
	code, _, rb := do(c.t, nil, method, c.b.URL+path+"?"+apiVersion, "application/json", body, "aeg-sas-key", c.key)
	if code != http.StatusOK {
		c.t.Fatalf("%s %s = %d: %s", method, path, code, rb)
	}
	return rb
}

// open navigates to a view of the console and waits until it has loaded.
func (c *consoleScene) open(fragment string) {
	c.t.Helper()
	c.navigate(fragment)
	c.waitText("document.body.dataset.loaded === 'true'")
}

func (c *consoleScene) navigate(fragment string) {
	c.t.Helper()
	page := c.page
	if page == "" {
		page = c.b.URL
	}
	c.browser.Do(chromedp.Navigate(page + "/console/" + fragment))
}

func (c *consoleScene) waitText(cond string) {
	c.t.Helper()
	c.browser.WaitFor(10*time.Second, cond, "document.body.innerText.slice(0, 2000)")
}

// shoot saves the view at both sizes.
func (c *consoleScene) shoot(name string) {
	c.t.Helper()
	for _, s := range consoleSizes {
		c.browser.Viewport(s.width, s.height)
		c.browser.Screenshot(c.shots, name+"-"+s.name)
	}
	c.browser.Viewport(consoleSizes[0].width, consoleSizes[0].height)
}

// at returns the scene for use in t, a subtest.
func (c *consoleScene) at(t *testing.T) *consoleScene {
	d := *c
	d.t, d.browser = t, c.browser.For(t)
	return &d
}

func (c *consoleScene) text() string {
	return browser.Eval[string](c.browser, "document.body.innerText")
}

// clean fails the test if any page opened a dialog, threw, or broke a
// rule of its Content-Security-Policy.
func (c *consoleScene) clean() {
	c.t.Helper()
	if d := c.browser.Dialogs(); len(d) > 0 {
		c.t.Errorf("the page opened dialogs: %q", d)
	}
	if e := c.browser.Exceptions(); len(e) > 0 {
		c.t.Errorf("the page threw: %q", e)
	}
	if e := c.browser.Errors(); len(e) > 0 {
		c.t.Errorf("the browser logged errors: %q", e)
	}
}

func TestConsole_Browser(t *testing.T) {
	// Serial (see doc.go): the live tail must show an event within 2 s.
	c := newConsoleScene(t)
	publish := func(topic string, events any) {
		c.mgmt(http.MethodPost, "/topics/"+topic+"/events", events)
	}
	publish("orders", egEvents("o", 3))
	c.ok.waitAccepted(t, 3, 10*time.Second)
	eventually(t, 10*time.Second, func() error {
		if len(c.bad.requests()) < 3 {
			return fmt.Errorf("the failing endpoint got %d requests", len(c.bad.requests()))
		}
		return nil
	})

	t.Run("WrongKey", func(t *testing.T) {
		c := c.at(t)
		c.navigate("")
		c.waitText("!document.getElementById('auth').hidden")
		c.shoot("key-prompt")
		c.browser.Do(chromedp.SendKeys(chromedp.ID("auth-key"), "not-the-key"), chromedp.Click(chromedp.CSS("#auth-form button")))
		c.waitText("!document.getElementById('auth').hidden && document.getElementById('auth-msg').textContent.includes('refused')")
		msg := browser.Eval[string](c.browser, "document.getElementById('auth-msg').textContent")
		if !strings.Contains(msg, "The broker refused this SAS key") {
			t.Errorf("wrong key: the page says %q", msg)
		}
		c.shoot("key-refused")
	})

	t.Run("Overview", func(t *testing.T) {
		c := c.at(t)
		c.browser.Do(chromedp.SendKeys(chromedp.ID("auth-key"), c.key), chromedp.Click(chromedp.CSS("#auth-form button")))
		c.waitText("document.getElementById('auth').hidden && document.body.dataset.loaded === 'true'")
		c.waitText("document.querySelector('tr.bad .badge') && document.querySelector('tr.bad .badge').textContent === 'Failing'")
		text := c.text()
		for _, want := range []string{"orders", "telemetry", "billing", "shipping", "reader", "EventGridSchema", "CloudEventSchemaV1_0", "WebHook", "Queue", "503"} {
			if !strings.Contains(text, want) {
				t.Errorf("the overview does not show %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "secret-in-query") || strings.Contains(text, "/api/orders") {
			t.Errorf("the overview shows a webhook's path or query, which may hold a secret:\n%s", text)
		}
		// Failing first, and in red.
		first := browser.Eval[string](c.browser, "document.querySelector('table.subs tbody tr').innerText")
		if !strings.Contains(first, "shipping") || !strings.Contains(first, "Failing") {
			t.Errorf("the first subscription row is %q, want the failing one", first)
		}
		if key := browser.Eval[string](c.browser, "sessionStorage.getItem('edgegrid.console.sasKey') || ''"); key != c.key {
			t.Errorf("the key is not kept in sessionStorage")
		}
		if ck := browser.Eval[string](c.browser, "document.cookie"); ck != "" {
			t.Errorf("the page set cookies: %q", ck)
		}
		c.shoot("overview")
	})

	t.Run("SendTestEvent", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders")
		c.waitText("document.querySelector('form.send textarea') && document.querySelector('form.send textarea').value.includes('eventType')")
		var sent map[string]any
		if err := json.Unmarshal([]byte(browser.Eval[string](c.browser, "document.querySelector('form.send textarea').value")), &sent); err != nil {
			t.Fatalf("the form does not hold JSON: %v", err)
		}
		c.browser.Do(chromedp.Click(chromedp.CSS("form.send button[type=submit]")))
		c.waitText("document.querySelector('form.send .result').textContent.includes('Accepted')")
		id := fmt.Sprint(sent["id"])
		eventually(t, 10*time.Second, func() error {
			if c.ok.accepted(t)[id] == 0 {
				return fmt.Errorf("the sink has not received the test event %s", id)
			}
			return nil
		})
		// A bad event is refused with the broker's message.
		c.browser.Do(chromedp.SetValue(chromedp.CSS("form.send textarea"), `{"id":"x"}`), chromedp.Click(chromedp.CSS("form.send button[type=submit]")))
		c.waitText("document.querySelector('form.send .result').textContent.includes('Refused')")
		if got := browser.Eval[string](c.browser, "document.querySelector('form.send .result').textContent"); !strings.Contains(got, "is required") {
			t.Errorf("a bad test event: the page says %q, want the broker's reason", got)
		}
		c.browser.Do(chromedp.Click(chromedp.CSS("form.send button[type=button]")))
		c.shoot("topic")
	})

	t.Run("Subscription", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/shipping")
		c.waitText("document.querySelector('.title-row .badge') && document.querySelector('.title-row .badge').textContent === 'Failing'")
		text := c.text()
		for _, want := range []string{"In back-off", "503", "Settings", "Retry now", hostile} {
			if !strings.Contains(text, want) {
				t.Errorf("the subscription view does not show %q:\n%s", want, text)
			}
		}
		c.shoot("subscription-failing")
		c.open("#/topics/telemetry/subscriptions/reader")
		c.waitText("document.body.innerText.includes('Available')")
		c.shoot("subscription-queue")
	})

	t.Run("HostileTextStaysText", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/shipping")
		c.waitText("document.body.innerText.includes(" + jsString(hostile) + ")")
		c.noHostileElements()
	})
	// What follows reads the inspection routes (docs/console.md), which
	// every panel must find.
	publish("orders", []map[string]any{{"id": "hostile-1", "subject": hostile, "eventType": hostile,
		"eventTime": "2026-01-01T00:00:00Z", "dataVersion": "1.0", "data": map[string]any{"note": hostile}}})

	t.Run("LiveTail", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders")
		c.waitText("/live|not available/.test(document.querySelector('.live-status').textContent)")
		c.mustServe(".live-status", "the live tail, GET /topics/{t}/events")
		c.waitText("document.querySelector('form.send textarea')")
		id := browser.Eval[string](c.browser, "JSON.parse(document.querySelector('form.send textarea').value).id")
		c.browser.Do(chromedp.Click(chromedp.CSS("form.send button[type=submit]")))
		c.browser.WaitFor(2*time.Second, "document.querySelector('.tail').innerText.includes("+jsString(id)+")", "document.querySelector('.tail').innerText")
		publish("orders", []map[string]any{{"id": "hostile-2", "subject": hostile, "eventType": "recordInserted",
			"eventTime": "2026-01-01T00:00:00Z", "dataVersion": "1.0", "data": map[string]any{}}})
		c.browser.WaitFor(2*time.Second, "document.querySelector('.tail').innerText.includes("+jsString(hostile)+")", "document.querySelector('.tail').innerText")
		c.noHostileElements()
		c.browser.Do(chromedp.Click(chromedp.CSS(".tail .row-head")))
		c.shoot("topic-live")
	})

	t.Run("FailingQueue", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/shipping")
		c.waitText("!document.querySelector('#peek .panel-body').innerText.includes('Loading')")
		c.mustServe("#peek", "peek, GET /topics/{t}/eventSubscriptions/{s}/events")
		c.waitText("document.body.innerText.includes('hostile-1') && document.body.innerText.includes(" + jsString(hostile) + ")")
		for _, want := range []string{"Failing", "503", "first back-off"} {
			if text := c.text(); !strings.Contains(text, want) {
				t.Errorf("the failing subscription's view does not show %q:\n%s", want, text)
			}
		}
		c.noHostileElements()
		c.shoot("subscription-peek")
	})

	t.Run("RetryNow", func(t *testing.T) {
		// The operator fixed the endpoint: Retry now, once confirmed,
		// delivers what waited in back-off at once, and the back-off is
		// empty.
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/shipping")
		c.waitText("document.querySelector('.title-row .badge') && document.querySelector('.title-row .badge').textContent === 'Failing'")
		waiting := browser.Eval[int](c.browser, "document.querySelectorAll('#peek li').length")
		c.fixed.Store(true)
		got := c.act("retryNow", fmt.Sprintf("Retry %d events now?", waiting), true)
		// The answer may go on to say how many were at their last attempt.
		if want := fmt.Sprintf("%d events made ready.", waiting); !strings.HasPrefix(got, want) {
			t.Errorf("Retry now says %q, want %q", got, want)
		}
		c.waitText("document.querySelector('.title-row .badge').textContent === 'Idle' && " +
			"document.querySelector('#peek').innerText.includes('Nothing waits') && " +
			"[...document.querySelectorAll('.tile')].some((t) => t.innerText.startsWith('In back-off\\n0'))")
		c.shoot("subscription-retried")
	})
	c.clean()
}

// mustServe fails the test when the element sel says the broker does not
// serve what the test needs.
func (c *consoleScene) mustServe(sel, what string) {
	c.t.Helper()
	expr := "document.querySelector(" + jsString(sel) + ").textContent"
	if text := browser.Eval[string](c.browser, expr); strings.Contains(strings.ToLower(text), "not available") {
		c.t.Fatalf("the page says %s is not available (docs/console.md)", what)
	}
}

// noHostileElements fails the test if text meant as text became elements.
func (c *consoleScene) noHostileElements() {
	c.t.Helper()
	if n := browser.Eval[int](c.browser, "document.querySelectorAll('img[src=\"x\"], img[onerror], [onerror]').length"); n != 0 {
		c.t.Errorf("the page made %d elements out of text", n)
	}
	if d := c.browser.Dialogs(); len(d) > 0 {
		c.t.Errorf("the page opened dialogs: %q", d)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// With the defaults (client certificates on, SAS keys off) the page asks
// for no key: it says that the broker takes client certificates only and
// that the browser presented none, as the broker's 401 says. The broker
// serves HTTPS with the certificate it makes at start, which the browser is
// told to accept.
func TestConsole_BrowserCertificatesOnly(t *testing.T) {
	t.Parallel()
	br := browser.Start(t, consoleSizes[0].width, consoleSizes[0].height, chromedp.Flag("ignore-certificate-errors", true))
	c := &consoleScene{t: t, browser: br, shots: os.Getenv("CONSOLE_SCREENSHOTS")}
	if c.shots == "" {
		c.shots = t.TempDir()
	} else if err := os.MkdirAll(c.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", c.shots)
	c.b = startBroker(t, map[string]string{
		"api__httpPort":    "0",
		"api__httpsPort":   "0",
		"api__bindAddress": "127.0.0.1",
	})
	c.browser.Do(chromedp.Navigate(c.b.TLS + "/console/"))
	c.waitText("!document.getElementById('auth').hidden && document.getElementById('auth-msg').textContent !== ''")
	msg := browser.Eval[string](c.browser, "document.getElementById('auth-msg').textContent")
	if !strings.Contains(msg, "This broker takes client certificates only, and your browser presented none.") {
		t.Errorf("the page says %q", msg)
	}
	if strings.Contains(msg, "SAS key") || strings.Contains(msg, "refused") {
		t.Errorf("the page speaks of a key, or of a refusal: %q", msg)
	}
	if visible := browser.Eval[bool](c.browser, "!document.getElementById('auth-keyfields').hidden"); visible {
		t.Error("the page asks for a SAS key, which this broker does not take")
	}
	if conn := browser.Eval[string](c.browser, "document.getElementById('conn').textContent"); conn != "certificate needed" {
		t.Errorf("the connection badge says %q, want \"certificate needed\"", conn)
	}
	c.shoot("certificate-needed")
	c.clean()
}
