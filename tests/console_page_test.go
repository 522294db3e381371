package tests_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/browser"
	"github.com/edgegrid/edgegrid/pkg/testkit/doctest"
)

// TestConsole_BrowserReadable covers what makes the page readable at a
// glance: totals beside rates, what gave events up sorting above what is
// healthy, charts whose bars and scales can be read, rows that show their
// whole text, one event's time the same in every panel, the endpoint's
// host explained, a queue nobody receives from not called Delivering, and
// live lists that outlive the broker ending their streams.
func TestConsole_BrowserReadable(t *testing.T) {
	// Serial (see doc.go): the live tail must show an event within 2 s.
	// Streams end after 1.5 × 2 s, so the page reopens them while it is
	// watched (a keep-alive every second keeps their writes within the
	// timeout); back-off lasts an hour, so failed events stay.
	c := newBareScene(t, "api__requestTimeoutInSeconds", "2", "api__eventStreamHeartbeatIntervalInSeconds", "1",
		"broker__backoffIntervals", "1h,1h")
	auditFixed := &atomic.Bool{}
	c.ok = newSink(t, nil)
	c.bad = newSink(t, func(int, *http.Request) int { return http.StatusServiceUnavailable })
	audit := newSink(t, func(int, *http.Request) int {
		if auditFixed.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	c.mgmt(http.MethodPut, "/topics/orders", map[string]any{"properties": map[string]any{"inputSchema": "EventGridSchema"}})
	for name, url := range map[string]string{"billing": c.ok.URL, "shipping": c.bad.URL, "audit": audit.URL} {
		attempts := map[string]int{"billing": 3, "shipping": 3, "audit": 1}[name]
		c.mgmt(http.MethodPut, "/topics/orders/eventSubscriptions/"+name, map[string]any{"properties": map[string]any{
			"destination": webhookDest(url + "/hook"),
			"retryPolicy": map[string]any{"maxDeliveryAttempts": attempts},
		}})
	}
	c.mgmt(http.MethodPut, "/topics/telemetry", map[string]any{"properties": map[string]any{"inputSchema": "EventGridSchema"}})
	c.mgmt(http.MethodPut, "/topics/telemetry/eventSubscriptions/reader", map[string]any{"properties": queueProps(nil)})
	// A burst of 5 failures on shipping; audit gives the 5 up, then
	// delivers one and is idle, with what it gave up.
	c.mgmt(http.MethodPost, "/topics/orders/events", egEvents("a", 5))
	c.ok.waitAccepted(t, 5, 10*time.Second)
	eventually(t, 10*time.Second, func() error {
		if ds := c.status("orders", "audit"); ds["dropped"] != 5.0 {
			return fmt.Errorf("audit: %v", ds)
		}
		return nil
	})
	auditFixed.Store(true)
	c.mgmt(http.MethodPost, "/topics/orders/events", egEvents("b", 1))
	audit.waitAccepted(t, 1, 10*time.Second)
	c.ok.waitAccepted(t, 6, 10*time.Second)
	c.mgmt(http.MethodPost, "/topics/telemetry/events", egEvents("q", 2))
	c.enterKey()

	t.Run("OverviewTotalsAndOrder", func(t *testing.T) {
		c := c.at(t)
		c.open("")
		c.waitText("document.querySelectorAll('table.subs tbody tr').length === 4")
		c.waitText("[...document.querySelectorAll('.summary .tile')].some((t) => t.innerText.startsWith('Delivered\\n7'))")
		order := browser.Eval[[]string](c.browser, "[...document.querySelectorAll('table.subs tbody tr .name')].map((a) => a.textContent)")
		// Failing first, then what gave events up (audit is idle now), then
		// events nobody receives, then the healthy.
		want := []string{"orders / shipping", "orders / audit", "telemetry / reader", "orders / billing"}
		if strings.Join(order, ",") != strings.Join(want, ",") {
			t.Errorf("the subscriptions are listed %q, want %q", order, want)
		}
		for _, col := range []string{"Delivered", "Failed attempts", "Given up"} {
			if !strings.Contains(c.text(), col) {
				t.Errorf("the overview has no %q", col)
			}
		}
		c.shoot("readable-overview")
	})

	t.Run("Charts", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/shipping")
		c.waitText("document.querySelector('#history .chart rect.s-failed')")
		// The burst of 5 failures is a bar one can see and point at.
		w := browser.Eval[float64](c.browser, "Math.min(...[...document.querySelectorAll('#history rect.s-failed')].map((r) => r.getBoundingClientRect().width))")
		ht := browser.Eval[float64](c.browser, "Math.max(...[...document.querySelectorAll('#history rect.s-failed')].map((r) => r.getBoundingClientRect().height))")
		if w < 5 || ht < 10 {
			t.Errorf("the bar of 5 failures is %.1f × %.1f px", w, ht)
		}
		scales := browser.Eval[[]string](c.browser, "[...document.querySelectorAll('#history .scale span:first-child')].map((s) => s.textContent)")
		grammatical := regexp.MustCompile(`^(1 event|[0-9,]+ events)( per (min|\d+ s|\d+ min))?$|^[0-9.,]+ ms$`)
		for _, s := range scales {
			if !grammatical.MatchString(s) {
				t.Errorf("a chart's scale reads %q", s)
			}
		}
		// Latency: a mark where requests ended, no line across the gaps.
		if n := browser.Eval[int](c.browser, "document.querySelectorAll('#history .latency polyline, #history .latency path').length"); n != 0 {
			t.Errorf("the latency chart draws %d lines", n)
		}
		if n := browser.Eval[int](c.browser, "document.querySelectorAll('#history .latency g.lat').length"); n == 0 {
			t.Error("the latency chart shows no request")
		}
		c.shoot("readable-charts")
		c.open("#/topics/telemetry/subscriptions/reader")
		c.waitText("document.querySelector('#history .chart')")
		if browser.Eval[bool](c.browser, "Boolean(document.querySelector('#history .latency'))") {
			t.Error("a queue subscription, which has no delivery requests, has a latency chart")
		}
	})

	t.Run("RowsShowTheirWholeText", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/shipping")
		c.waitText("document.querySelectorAll('#peek li.row').length === 6")
		cut := browser.Eval[int](c.browser, "[...document.querySelectorAll('.row-head *')].filter((e) => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflow !== 'visible').length")
		if cut != 0 {
			t.Errorf("%d pieces of row text are cut off at 1366 px", cut)
		}
		meta := browser.Eval[string](c.browser, "document.querySelector('#peek .row-meta').textContent")
		for _, want := range []string{"attempt 1 of 3", "next attempt in ", "webhook: destination answered 503 Service Unavailable"} {
			if !strings.Contains(meta, want) {
				t.Errorf("a waiting event's row reads %q, without %q", meta, want)
			}
		}
		browser.Eval[bool](c.browser, "(document.querySelector('#peek .row-head').click(), true)")
		detail := browser.Eval[string](c.browser, "document.querySelector('#peek .detail:not([hidden])').innerText")
		for _, want := range []string{"Last error", "503 Service Unavailable", "Next attempt", `"eventType": "recordInserted"`} {
			if !strings.Contains(detail, want) {
				t.Errorf("an opened waiting event shows %q, without %q", detail, want)
			}
		}
		c.shoot("readable-rows")
	})

	t.Run("OneTimePerEvent", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders")
		c.waitText("document.querySelector('.live-status').textContent === 'live'")
		// A batch whose events share the time they were accepted; their own
		// times say which came first.
		c.mgmt(http.MethodPost, "/topics/orders/events", []map[string]any{
			{"id": "t1", "subject": "/t/1", "eventType": "timed", "eventTime": "2026-01-01T10:00:00.123Z", "dataVersion": "1.0", "data": map[string]any{}},
			{"id": "t2", "subject": "/t/2", "eventType": "timed", "eventTime": "2026-01-01T10:00:00.456Z", "dataVersion": "1.0", "data": map[string]any{}},
		})
		c.browser.WaitFor(5*time.Second, "document.querySelector('.tail').innerText.includes('t2')", "document.querySelector('.tail').innerText")
		rowTime := func(list, id string) string {
			return browser.Eval[string](c.browser, "[...document.querySelectorAll('"+list+" li.row')].find((li) => li.querySelector('.id').textContent.trim() === '"+id+"').querySelector('.time').textContent")
		}
		tail := rowTime(".tail", "t1")
		c.open("#/topics/orders/subscriptions/shipping")
		c.waitText("document.querySelector('#peek').innerText.includes('t2')")
		if peek := rowTime("#peek", "t1"); peek != tail || !strings.Contains(peek, ":00.123") {
			t.Errorf("event t1's time reads %q in the live tail and %q in the waiting events", tail, peek)
		}
		ids := browser.Eval[[]string](c.browser, "[...document.querySelectorAll('#peek li.row .id')].map((e) => e.textContent)")
		if i1, i2 := indexOf(ids, "t1"), indexOf(ids, "t2"); i1 < 0 || i2 < 0 || i1 > i2 {
			t.Errorf("oldest first lists %q", ids)
		}
	})

	t.Run("EndpointExplained", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders")
		c.waitText("document.querySelector('.tile.endpoint .hint')")
		hint := browser.Eval[string](c.browser, "document.querySelector('.tile.endpoint .hint').textContent")
		if !strings.Contains(hint, "eventgridmodule is a module's name: it resolves only inside IoT Edge") ||
			!strings.Contains(hint, c.b.URL+"/topics/orders/events?api-version=") {
			t.Errorf("the endpoint's hint reads %q", hint)
		}
	})

	t.Run("QueueNobodyReceives", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/telemetry/subscriptions/reader")
		c.waitText("document.querySelectorAll('#peek li.row').length === 2")
		if st := browser.Eval[string](c.browser, "document.querySelector('.title-row .badge').textContent"); st != "Awaiting receiver" {
			t.Errorf("a queue subscription nobody receives from reads %q", st)
		}
		if browser.Eval[bool](c.browser, "document.querySelector('[data-action=retryNow]').offsetParent !== null") {
			t.Error("Retry now is offered with nothing delayed")
		}
		c.shoot("readable-queue")
	})

	t.Run("StreamsReopenQuietly", func(t *testing.T) {
		// The broker ends each stream after 3 s; the page opens it again at
		// once and its status never leaves "live".
		c := c.at(t)
		c.open("#/topics/orders")
		c.waitText("document.querySelector('.live-status').textContent === 'live'")
		browser.Eval[bool](c.browser, `(() => {
			const el = document.querySelector('.live-status');
			window.seenStatus = new Set();
			new MutationObserver(() => window.seenStatus.add(el.textContent)).observe(el, {childList: true, characterData: true, subtree: true});
			return true;
		})()`)
		c.browser.WaitFor(20*time.Second, "Number(document.querySelector('.live-status').dataset.reopened || 0) >= 2",
			"document.querySelector('.live-status').dataset.reopened")
		if seen := browser.Eval[[]string](c.browser, "[...window.seenStatus]"); len(seen) > 0 && strings.Join(seen, ",") != "live" {
			t.Errorf("while its streams were reopened, the tail's status read %q", seen)
		}
		c.mgmt(http.MethodPost, "/topics/orders/events", egEvents("after-reopen", 1))
		c.browser.WaitFor(2*time.Second, "document.querySelector('.tail').innerText.includes('after-reopen0')", "document.querySelector('.tail').innerText")
	})
	c.clean()
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// TestConsole_BrowserBrokerStops stops the broker under an open page, then
// starts an empty one on the same address: the page greys out and says in
// its own words that the broker does not answer, since when, and from when
// its figures are; then that the broker has restarted.
func TestConsole_BrowserBrokerStops(t *testing.T) {
	t.Parallel()
	port := doctest.FreeAddr(t)
	port = port[strings.LastIndexByte(port, ':')+1:]
	c := newBareScene(t, "api__httpPort", port)
	c.ok = newSink(t, nil)
	c.mgmt(http.MethodPut, "/topics/orders", map[string]any{"properties": map[string]any{"inputSchema": "EventGridSchema"}})
	c.mgmt(http.MethodPut, "/topics/orders/eventSubscriptions/billing", map[string]any{"properties": map[string]any{"destination": webhookDest(c.ok.URL + "/hook")}})
	c.mgmt(http.MethodPost, "/topics/orders/events", egEvents("a", 3))
	c.ok.waitAccepted(t, 3, 10*time.Second)
	c.enterKey()
	c.waitText("document.body.innerText.includes('billing')")

	c.b.Stop()
	c.waitText("document.body.dataset.stale === 'true' && document.getElementById('health').innerText.includes('The broker does not answer')")
	text := c.text()
	if strings.Contains(text, "Failed to fetch") || strings.Contains(text, "NetworkError") {
		t.Errorf("the page speaks the browser's words:\n%s", text)
	}
	if !regexp.MustCompile(`since \d\d:\d\d:\d\d\.\d{3}\). What this page shows is from its last answer, at \d\d:\d\d:\d\d\.\d{3},`).MatchString(text) {
		t.Errorf("the page does not say since when the broker is silent and from when its figures are:\n%s", text)
	}
	if f := browser.Eval[string](c.browser, "getComputedStyle(document.querySelector('main')).filter"); !strings.Contains(f, "grayscale") {
		t.Errorf("the stale page is not greyed out (filter %q)", f)
	}
	c.shoot("broker-stopped")

	// An empty broker on the same address, with the same key.
	c.b = startBroker(t, merge(devEnv(), "api__httpPort", port,
		"inbound__clientAuth__sasKeys__enabled", "true", "inbound__clientAuth__sasKeys__key1", c.key))
	c.waitText("document.body.dataset.stale !== 'true' && document.getElementById('health').innerText.includes('The broker has restarted')")
	if browser.Eval[bool](c.browser, "document.body.classList.contains('stale')") {
		t.Error("the page stays greyed out once the broker answers")
	}
	c.shoot("broker-restarted")
	browser.Eval[bool](c.browser, "(document.querySelector('#health .restarted button').click(), true)")
	c.waitText("!document.getElementById('health').innerText.includes('restarted')")
	c.clean()
}
