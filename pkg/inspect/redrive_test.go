package inspect_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// TestSub_ClaimRedrive: a redrive claims the entries its filter chooses,
// oldest first, once: a claimed entry is marked and not claimed again,
// unless the redrive gives it back; what it cannot move it says, by id
// and why.
func TestSub_ClaimRedrive(t *testing.T) {
	b, clk := newBoard(t, inspect.Options{MaxFailures: 10, MaxFailureBytes: 100})
	b.SubscriptionPut(sub(1, "t", "s"))
	rec := b.Subscription(1)
	give := func(id string, size int) {
		body := []byte(`{"id":"` + id + `","p":"` + strings.Repeat("x", max(size-17, 0)) + `"}`)
		rec.GaveUp(inspect.GivenUp{Time: clk.Now(), Reason: "Rejected", Attempts: 1, Body: body})
		clk.Advance(time.Second)
	}
	give("a", 20)
	give("b", 20)
	give("big", 150) // kept without its body
	since := clk.Now()
	give("c", 20)
	give("a", 20) // the same id again

	ids := func(rs []inspect.Redrivable) string {
		var s []string
		for _, r := range rs {
			s = append(s, inspect.EventID(r.Body))
		}
		return strings.Join(s, ",")
	}
	left := func(ns []inspect.NotMoved) string { return fmt.Sprint(ns) }

	got, nm := rec.ClaimRedrive(inspect.RedriveFilter{Since: since}, clk.Now())
	if ids(got) != "c,a" || len(nm) != 0 {
		t.Errorf("since: %s, left %s", ids(got), left(nm))
	}
	rec.UnclaimRedrive(got[1:]) // the second a could not be queued
	got, nm = rec.ClaimRedrive(inspect.RedriveFilter{IDs: []string{"a", "big", "c", "zz", "zz"}}, clk.Now())
	if ids(got) != "a,a" || left(nm) != "[{big bodyNotKept} {c alreadyRedriven} {zz notFound}]" {
		t.Errorf("ids: %s, left %s", ids(got), left(nm))
	}
	got, nm = rec.ClaimRedrive(inspect.RedriveFilter{}, clk.Now())
	if ids(got) != "b" || left(nm) != "[{big bodyNotKept}]" {
		t.Errorf("all: %s, left %s", ids(got), left(nm))
	}
	fs, _ := rec.Failures(10)
	for _, f := range fs {
		if redriven := !f.Redriven.IsZero(); redriven != (f.EventID != "big") {
			t.Errorf("%s redriven at %v", f.EventID, f.Redriven)
		}
	}
	if got, _ := rec.ClaimRedrive(inspect.RedriveFilter{}, clk.Now()); len(got) != 0 {
		t.Errorf("a second redrive of all claimed %s", ids(got))
	}
}

// TestSub_Evicted: GaveUp says how many entries the bounds pushed out.
func TestSub_Evicted(t *testing.T) {
	b, _ := newBoard(t, inspect.Options{MaxFailures: 2, MaxFailureBytes: 1 << 20})
	b.SubscriptionPut(sub(1, "t", "s"))
	rec := b.Subscription(1)
	var evicted []int
	for i := range 4 {
		evicted = append(evicted, rec.GaveUp(inspect.GivenUp{Body: []byte(fmt.Sprintf(`{"id":"%d"}`, i))}))
	}
	if fmt.Sprint(evicted) != "[0 0 1 1]" {
		t.Errorf("evicted %v", evicted)
	}
	rec.Purged(3)
	if tot := rec.Totals(); tot.Dropped != 7 {
		t.Errorf("dropped %d, want the 4 given up and the 3 purged", tot.Dropped)
	}
}
