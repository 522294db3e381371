package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/browser"
)

// act presses the button of a subscription's action (its data-action),
// checks that the page asks first with the question want (a regular
// expression when it starts with ^), confirms or cancels, and returns what
// the page then says.
func (c *consoleScene) act(action, want string, confirm bool) string {
	c.t.Helper()
	return c.actOn("[data-action="+action+"]", action, want, confirm)
}

// actOn is act for the button sel.
func (c *consoleScene) actOn(sel, action, want string, confirm bool) string {
	c.t.Helper()
	result := ".actions > .result"
	if strings.HasPrefix(action, "redrive") {
		result = "#failures .redrive > .result"
	}
	q := jsString(sel)
	c.browser.WaitFor(10*time.Second, "(() => { const b = document.querySelector("+q+"); return b && b.offsetParent !== null && !b.disabled })()",
		"'no button '+"+q+"+' to press: '+document.body.innerText.slice(0, 1500)")
	browser.Eval[bool](c.browser, "(document.querySelector("+q+").click(), true)")
	c.browser.WaitFor(10*time.Second, "document.querySelector('#confirm h2')",
		"'no question asked; the page says: '+(document.querySelector("+jsString(result)+") || {}).textContent")
	title := browser.Eval[string](c.browser, "document.querySelector('#confirm h2').textContent")
	if strings.HasPrefix(want, "^") {
		if !regexp.MustCompile(want).MatchString(title) {
			c.t.Errorf("%s asks %q, want %s", action, title, want)
		}
	} else if title != want {
		c.t.Errorf("%s asks %q, want %q", action, title, want)
	}
	c.shoot("confirm-" + action)
	button := "cancel"
	if confirm {
		button = "ok"
	}
	browser.Eval[bool](c.browser, "(document.querySelector('#confirm [data-confirm="+button+"]').click(), true)")
	c.browser.WaitFor(15*time.Second, "!document.getElementById('confirm') && document.querySelector("+jsString(result)+").dataset.state !== 'busy'",
		"document.querySelector("+jsString(result)+").textContent")
	return browser.Eval[string](c.browser, "document.querySelector("+jsString(result)+").textContent")
}

// status reads a subscription's deliveryStatus over the API.
func (c *consoleScene) status(topic, sub string) map[string]any {
	c.t.Helper()
	var s struct {
		Properties struct {
			DeliveryStatus map[string]any `json:"deliveryStatus"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(c.mgmt(http.MethodGet, "/topics/"+topic+"/eventSubscriptions/"+sub, nil), &s); err != nil {
		c.t.Fatal(err)
	}
	return s.Properties.DeliveryStatus
}

// TestConsole_BrowserActions acts from the page as an operator would, on
// the real broker: each button asks first with the numbers it will touch,
// Cancel does nothing, and the answer is said in words
// (docs/console.md#acting-from-the-console).
func TestConsole_BrowserActions(t *testing.T) {
	t.Parallel()
	c := newActionScene(t)

	t.Run("RetryNowAsksAndNeverSpendsTheLastAttempt", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/shipping")
		c.waitText("document.querySelector('.title-row .badge').textContent === 'Failing' && document.querySelectorAll('#peek li.row').length === 3")
		// Rows say how far each event is: one attempt made of 3 allowed.
		c.waitText("document.querySelector('#peek').innerText.includes('attempt 1 of 3')")
		before := len(c.bad.requests())
		if got := c.act("retryNow", "Retry 3 events now?", false); got != "Cancelled: nothing was done." {
			t.Errorf("a cancelled Retry now says %q", got)
		}
		if n := len(c.bad.requests()); n != before {
			t.Errorf("a cancelled Retry now sent %d requests", n-before)
		}
		// The endpoint still fails: each forced attempt fails, and none
		// uses up an event's last attempt, however often it is pressed.
		for round := 2; round <= 4; round++ {
			got := c.act("retryNow", "Retry 3 events now?", true)
			if !strings.HasPrefix(got, "3 events made ready.") {
				t.Fatalf("round %d: Retry now says %q", round, got)
			}
			// A forced attempt that fails does not count
			// (docs/delivery.md#retry-now): each event stays at its first
			// attempt of 3, none at its last.
			if !strings.Contains(got, "None was at its last attempt") {
				t.Errorf("press %d of Retry now says %q, want that none was at its last attempt", round-1, got)
			}
			eventually(t, 10*time.Second, func() error {
				if ds := c.status("orders", "shipping"); ds["inBackoff"] != 3.0 || ds["inFlight"] != 0.0 {
					return fmt.Errorf("status %v", ds)
				}
				return nil
			})
		}
		if ds := c.status("orders", "shipping"); ds["dropped"] != 0.0 || ds["deadLettered"] != 0.0 {
			t.Errorf("Retry now on a failing endpoint gave events up: %v", ds)
		}
		c.waitText("document.querySelector('#peek').innerText.includes('attempt 1 of 3')")
		c.shoot("action-retried-still-failing")
	})

	// Before the pause: the events published while billing is paused
	// reach audit too, and would add to its given-up list.
	t.Run("Redrive", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/audit")
		c.waitText("document.querySelectorAll('#failures li.row').length === 3")
		c.shoot("action-given-up")
		c.auditFixed.Store(true)
		// One row.
		got := c.actOn("#failures li.row:last-child [data-action=redrive-one]", "redrive-one", "^Redrive event a[0-2]\\?$", true)
		if got != "1 event moved back to audit." {
			t.Errorf("redriving one row says %q", got)
		}
		eventually(t, 10*time.Second, func() error {
			if n := len(c.audit.accepted(t)); n != 1 {
				return fmt.Errorf("the endpoint accepted %d events", n)
			}
			return nil
		})
		// Those given up since a time: the second round only.
		c.auditFixed.Store(false)
		c.mgmt(http.MethodPost, "/topics/orders/events", egEvents("b", 2))
		c.waitText("document.querySelector('#failures').innerText.includes('b0') && document.querySelector('#failures').innerText.includes('b1')")
		c.auditFixed.Store(true)
		since := c.givenUpSince("audit", "b")
		browser.Eval[bool](c.browser, "(() => { const i = document.querySelector('#failures input.since'); i.value = "+jsString(since)+"; return true })()")
		got = c.act("redrive-since", "^Redrive 2 events given up since ", true)
		if got != "2 events moved back to audit." {
			t.Errorf("redriving since %s says %q", since, got)
		}
		// All that is left: the rows not redriven yet, which keep their
		// button; the question and the answer count the same events.
		c.waitText("/Redrive all \\(\\d+\\)/.test(document.querySelector('[data-action=redrive-all]').textContent)")
		left := browser.Eval[int](c.browser, "document.querySelectorAll('#failures li.row [data-action=redrive-one]').length")
		if left == 0 {
			t.Fatal("no row is left to redrive")
		}
		got = c.act("redrive-all", fmt.Sprintf("^Redrive %d given-up events?\\?$", left), true)
		if !regexp.MustCompile(fmt.Sprintf(`^%d events? moved back to audit\.`, left)).MatchString(got) {
			t.Errorf("redriving all (%d asked) says %q", left, got)
		}
		acc := c.audit.waitAccepted(t, 5, 10*time.Second)
		for id, n := range acc {
			if n != 1 {
				t.Errorf("event %s was delivered %d times after its redrive", id, n)
			}
		}
		c.shoot("action-redriven")
	})

	t.Run("PauseHoldsAndResumeDelivers", func(t *testing.T) {
		c := c.at(t)
		c.open("#/topics/orders/subscriptions/billing")
		c.waitText("document.querySelector('.title-row .badge').textContent === 'Idle'")
		got := c.act("pause", "Pause delivery to billing?", true)
		if !strings.HasPrefix(got, "Paused since ") {
			t.Errorf("Pause says %q", got)
		}
		c.waitText("document.querySelector('.title-row .badge').textContent === 'Paused' && document.body.innerText.includes('Paused since')")
		if browser.Eval[bool](c.browser, "document.querySelector('[data-action=pause]').offsetParent !== null") {
			t.Error("a paused subscription still offers Pause")
		}
		c.mgmt(http.MethodPost, "/topics/orders/events", egEvents("held", 2))
		// Held: the page shows both waiting, and the endpoint has not
		// seen them.
		c.waitText("document.querySelectorAll('#peek li.row').length === 2")
		if n := c.ok.accepted(t); n["held0"]+n["held1"] != 0 {
			t.Errorf("a paused subscription delivered: %v", n)
		}
		c.shoot("action-paused")
		got = c.act("resume", "Resume delivery to billing?", true)
		if !strings.HasPrefix(got, "Resumed") {
			t.Errorf("Resume says %q", got)
		}
		got2 := c.ok.waitAccepted(t, 5, 10*time.Second) // the 3 of the start and the 2 held
		if got2["held0"] != 1 || got2["held1"] != 1 {
			t.Errorf("after resuming, the endpoint accepted %v", got2)
		}
		c.waitText("document.querySelector('.title-row .badge').textContent === 'Idle'")
	})

	t.Run("PurgeAsksWithTheCount", func(t *testing.T) {
		c := c.at(t)
		c.mgmt(http.MethodPost, "/topics/telemetry/events", egEvents("q", 5))
		c.open("#/topics/telemetry/subscriptions/reader")
		c.waitText("document.querySelectorAll('#peek li.row').length === 5")
		// Nobody receives: the state does not read Delivering, and nothing
		// is delayed, so Retry now is not offered.
		if st := browser.Eval[string](c.browser, "document.querySelector('.title-row .badge').textContent"); st == "Delivering" {
			t.Errorf("a queue subscription nobody receives from reads %q", st)
		}
		if browser.Eval[bool](c.browser, "document.querySelector('[data-action=retryNow]').offsetParent !== null") {
			t.Error("Retry now is offered with nothing delayed")
		}
		if got := c.act("purge", "Purge 5 waiting events?", false); got != "Cancelled: nothing was done." {
			t.Errorf("a cancelled purge says %q", got)
		}
		if ds := c.status("telemetry", "reader"); ds["available"] != 5.0 {
			t.Errorf("a cancelled purge removed events: %v", ds)
		}
		if got := c.act("purge", "Purge 5 waiting events?", true); got != "5 events purged." {
			t.Errorf("Purge says %q", got)
		}
		c.waitText("document.querySelector('#peek').innerText.includes('Nothing waits')")
		if ds := c.status("telemetry", "reader"); ds["available"] != 0.0 {
			t.Errorf("after the purge: %v", ds)
		}
		c.shoot("action-purged")
	})
	c.clean()
}

// givenUpSince returns the time, as the page's since field takes it (local
// time, to the second), of the oldest event given up on whose id starts
// with prefix. The test waits until the clock has passed the second of
// the newest given up before, so the field selects only these.
func (c *consoleScene) givenUpSince(sub, prefix string) string {
	c.t.Helper()
	var a struct {
		Value []struct {
			Time    time.Time `json:"time"`
			EventID string    `json:"eventId"`
		} `json:"value"`
	}
	if err := json.Unmarshal(c.mgmt(http.MethodGet, "/topics/orders/eventSubscriptions/"+sub+"/failures", nil), &a); err != nil {
		c.t.Fatal(err)
	}
	var oldest, before time.Time
	for _, v := range a.Value {
		if strings.HasPrefix(v.EventID, prefix) {
			if oldest.IsZero() || v.Time.Before(oldest) {
				oldest = v.Time
			}
		} else if v.Time.After(before) {
			before = v.Time
		}
	}
	if oldest.IsZero() || !oldest.Truncate(time.Second).After(before) {
		c.t.Fatalf("the events %s* were given up in the same second as earlier ones (%v, %v)", prefix, oldest, before)
	}
	tz := browser.Eval[int](c.browser, "new Date().getTimezoneOffset()")
	return oldest.Add(-time.Duration(tz) * time.Minute).UTC().Format("2006-01-02T15:04:05")
}

// newActionScene is a broker with a SAS key whose back-off lasts an hour
// (so only Retry now retries), a topic with a failing subscription
// (shipping, 3 attempts), a healthy one (billing) and one that gives every
// event up at its first failure (audit), and a topic with a queue
// subscription nobody receives from (reader).
func newActionScene(t *testing.T) *actionScene {
	c := &actionScene{consoleScene: newBareScene(t, "broker__backoffIntervals", "1h,1h"), auditFixed: &atomic.Bool{}}
	c.ok = newSink(t, nil)
	c.bad = newSink(t, func(int, *http.Request) int { return http.StatusServiceUnavailable })
	c.audit = newSink(t, func(int, *http.Request) int {
		if c.auditFixed.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	c.mgmt(http.MethodPut, "/topics/orders", map[string]any{"properties": map[string]any{"inputSchema": "EventGridSchema"}})
	for name, url := range map[string]string{"billing": c.ok.URL, "shipping": c.bad.URL, "audit": c.audit.URL} {
		attempts := map[string]int{"billing": 3, "shipping": 3, "audit": 1}[name]
		c.mgmt(http.MethodPut, "/topics/orders/eventSubscriptions/"+name, map[string]any{"properties": map[string]any{
			"destination": webhookDest(url + "/hook"),
			"retryPolicy": map[string]any{"maxDeliveryAttempts": attempts},
		}})
	}
	c.mgmt(http.MethodPut, "/topics/telemetry", map[string]any{"properties": map[string]any{"inputSchema": "EventGridSchema"}})
	c.mgmt(http.MethodPut, "/topics/telemetry/eventSubscriptions/reader", map[string]any{"properties": queueProps(nil)})
	c.mgmt(http.MethodPost, "/topics/orders/events", egEvents("a", 3))
	c.ok.waitAccepted(t, 3, 10*time.Second)
	eventually(t, 10*time.Second, func() error {
		if ds := c.status("orders", "audit"); ds["dropped"] != 3.0 {
			return fmt.Errorf("audit: %v", ds)
		}
		if ds := c.status("orders", "shipping"); ds["inBackoff"] != 3.0 {
			return fmt.Errorf("shipping: %v", ds)
		}
		return nil
	})
	// Later give-ups must fall in a later second (see givenUpSince).
	waitNextSecond(t)
	c.enterKey()
	return c
}

type actionScene struct {
	*consoleScene
	audit      *sink
	auditFixed *atomic.Bool
}

func (c *actionScene) at(t *testing.T) *actionScene {
	return &actionScene{consoleScene: c.consoleScene.at(t), audit: c.audit, auditFixed: c.auditFixed}
}

// waitNextSecond returns once the clock's second has changed.
func waitNextSecond(t *testing.T) {
	start := time.Now().Truncate(time.Second)
	eventually(t, 3*time.Second, func() error {
		if !time.Now().Truncate(time.Second).After(start) {
			return fmt.Errorf("still in the second of %v", start)
		}
		return nil
	})
}
