package schema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// accepted is the acceptance time stamped into every decoded event.
var accepted = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// MustDecodeBatch decodes body for topic "t1" and fails the test on error.
func MustDecodeBatch(tb testing.TB, s eventgrid.InputSchema, body string) []*eventgrid.Event {
	tb.Helper()
	evs, err := schema.DecodeBatch(s, "t1", []byte(body), accepted)
	if err != nil {
		tb.Fatalf("DecodeBatch(%s, %s): %v", s, body, err)
	}
	MustBeValidEvents(tb, evs)
	return evs
}

// MustBeValidEvents fails the test unless every event's Body is valid JSON
// and carries the acceptance time.
func MustBeValidEvents(tb testing.TB, evs []*eventgrid.Event) {
	tb.Helper()
	for i, ev := range evs {
		if ev == nil {
			tb.Fatalf("event %d is nil", i)
		}
		if !json.Valid(ev.Body) {
			tb.Fatalf("event %d: Body is not valid JSON: %s", i, ev.Body)
		}
		if !ev.Accepted.Equal(accepted) {
			tb.Fatalf("event %d: Accepted = %v, want %v", i, ev.Accepted, accepted)
		}
	}
}

// MustFail fails the test unless err is an *eventgrid.Error with the given
// code whose message contains every one of want.
func MustFail(tb testing.TB, err error, code string, want ...string) {
	tb.Helper()
	var e *eventgrid.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error = %v, want an *eventgrid.Error with code %s", err, code)
	}
	if e.Code != code {
		tb.Fatalf("error code = %s (%s), want %s", e.Code, e.Message, code)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			tb.Fatalf("error message %q does not contain %q", e.Message, w)
		}
	}
}

// eventCase is a table row for decoding one event of a batch: either want
// (the canonical Body) or code and msg (the error).
type eventCase struct {
	name string
	in   string
	want string
	code string
	msg  string
}
