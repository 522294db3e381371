package desired_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// TestReconciler_APICannotUndo: the REST API can neither delete nor
// change a declared subscription, so the declaration stays in force as
// applied (it used to be deleted, and stayed so until the source changed).
func TestReconciler_APICannotUndo(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d := doc(map[string]string{"t": `{}`}, map[string]string{"s": hook("t", "https://sink.example/s")})
	f.apply(t, fileSource, d)
	if err := f.reg.DeleteSubscription(ctx, "t", "s"); eventgrid.ErrorCode(err) != eventgrid.EConflict {
		t.Fatalf("API delete of a declared subscription: %v, want a conflict", err)
	}
	res, _ := f.apply(t, fileSource, d)
	if res.Changed() || res.Unchanged != 2 {
		t.Errorf("Result %+v, want everything unchanged", res)
	}
}

// TestReconciler_MoveCreatesBeforeDeleting: a subscription moved to a
// topic that does not exist (a typo) stays where it was, with its queue
// (same UID, never deleted); the failure is retried, and a corrected move
// puts the new place before deleting the old.
func TestReconciler_MoveCreatesBeforeDeleting(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.apply(t, fileSource, doc(map[string]string{"t1": `{}`, "t2": `{}`}, map[string]string{"s": hook("t1", "https://sink.example/s")}))
	before, _ := f.reg.Subscription(ctx, "t1", "s")
	f.rec.take()

	res, _ := f.apply(t, fileSource, doc(map[string]string{"t1": `{}`, "t2": `{}`}, map[string]string{"s": hook("t-typo", "https://sink.example/s")}))
	if msg := res.Errors.EventSubscriptions["s"]; !strings.Contains(msg, "TopicNotFound") || !res.Retrying() || res.Changed() {
		t.Errorf("typo move: %+v, want s skipped (TopicNotFound, retried) and nothing changed", res)
	}
	if got := f.rec.take(); len(got) != 0 {
		t.Errorf("changes %q, want none: the last good version stays", got)
	}
	if s, err := f.reg.Subscription(ctx, "t1", "s"); err != nil || s.UID != before.UID {
		t.Errorf("t1/s after the typo: %+v, %v; want it unchanged", s, err)
	}

	res, _ = f.apply(t, fileSource, doc(map[string]string{"t1": `{}`, "t2": `{}`}, map[string]string{"s": hook("t2", "https://sink.example/s")}))
	want := []string{"put t2/s", fmt.Sprintf("delete t1/s uid %d", before.UID)}
	if got := f.rec.take(); len(got) != 2 || !strings.HasPrefix(got[0], want[0]) || got[1] != want[1] {
		t.Errorf("corrected move: changes %q, want %q", got, want)
	}
	if res.Errors.Len() != 0 || res.Retrying() {
		t.Errorf("corrected move: %+v", res)
	}
}

// TestReconciler_TopicGoesOnlyWithWhatItHolds: a topic the source no
// longer declares stays, with its events, while the source still declares
// a subscription on it (or one whose move out of it failed); it goes once
// the source declares none of what it holds.
func TestReconciler_TopicGoesOnlyWithWhatItHolds(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.apply(t, fileSource, doc(map[string]string{"t1": `{}`}, map[string]string{"s": hook("t1", "https://sink.example/s")}))
	f.rec.take()

	res, _ := f.apply(t, fileSource, doc(nil, map[string]string{"s": hook("t1", "https://sink.example/s")}))
	if msg := res.Errors.Topics["t1"]; !strings.Contains(msg, `holds event subscription(s) "s" that are still declared`) || len(res.DeletedTopics) != 0 {
		t.Errorf("%+v, want t1 kept with a message naming s", res)
	}
	res, _ = f.apply(t, fileSource, doc(map[string]string{"t2": `{}`}, map[string]string{"s": hook("t-typo", "https://sink.example/s")}))
	if !strings.Contains(res.Errors.Topics["t1"], `"s"`) || len(res.DeletedTopics) != 0 || len(res.DeletedSubscriptions) != 0 {
		t.Errorf("%+v, want t1 and s kept while the move fails", res)
	}
	if got := f.rec.take(); len(got) != 0 {
		t.Errorf("changes %q, want none", got)
	}
	res, _ = f.apply(t, fileSource, doc(map[string]string{"t2": `{}`}, map[string]string{"s": hook("t2", "https://sink.example/s")}))
	if !reflect.DeepEqual(res.DeletedTopics, []string{"t1"}) || res.Errors.Len() != 0 {
		t.Errorf("%+v, want t1 deleted after s moved out", res)
	}
	if _, err := f.reg.Subscription(ctx, "t2", "s"); err != nil {
		t.Errorf("t2/s: %v", err)
	}
}
