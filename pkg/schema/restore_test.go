package schema_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// restoreSeeds are EventGridSchema batches whose events the decoder builds
// as their CloudEvents, or some of them.
var restoreSeeds = []string{
	`[{"id":"1","subject":"/s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":{"a": [1, 2]},"dataVersion":"1"}]`,
	`[{"id":"1","subject":"","eventType":"T","eventTime":"2024-05-06T07:08:09.5+02:00","dataVersion":" "}]`,
	`[{"id":"1","subject":" ","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":null,"dataVersion":"","metadataVersion":"1"}]`,
	`[{"id":"1","topic":"T1","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":"x","dataVersion":"2"},` +
		`{"id":"é","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","data":1,"dataVersion":"1"}]`,
	`[{"id":"a\"b","subject":"s","eventType":"T","eventTime":"2024-05-06T07:08:09Z","dataVersion":"1"}]`,
}

// TestRestoreEventGrid: an event built as its CloudEvent, restored, is the
// event the decoder builds as published, field for field; one built as
// published is left as it is.
func TestRestoreEventGrid(t *testing.T) {
	for _, body := range restoreSeeds {
		checkRestored(t, []byte(body))
	}
}

// FuzzRestoreEventGrid decodes arbitrary EventGridSchema bodies with and
// without ToCloudEvents: every event restored must be the one decoded as
// published.
func FuzzRestoreEventGrid(f *testing.F) {
	for _, body := range restoreSeeds {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkRestored(t, body) })
}

func checkRestored(t *testing.T, body []byte) {
	t.Helper()
	want, err := schema.DecodeBatch(eventgrid.EventGridSchema, "t1", body, accepted)
	if err != nil {
		return
	}
	got, err := (&schema.Scratch{ToCloudEvents: true}).DecodeBatch(eventgrid.EventGridSchema, "t1", body, accepted)
	if err != nil || len(got) != len(want) {
		t.Fatalf("with ToCloudEvents: %d events, %v; want %d", len(got), err, len(want))
	}
	for i, ev := range got {
		before := string(ev.Body)
		if err := schema.RestoreEventGrid(ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		w := want[i]
		if !bytes.Equal(ev.Body, w.Body) || ev.Converted || ev.Plain != w.Plain || ev.DataAt != w.DataAt ||
			ev.ID != w.ID || ev.Type != w.Type || ev.Subject != w.Subject || ev.HasSubject != w.HasSubject ||
			ev.DataVersion != w.DataVersion || !ev.Accepted.Equal(w.Accepted) {
			t.Fatalf("event %d restored from %s:\n%+v\n%s\nwant\n%+v\n%s", i, before, *ev, ev.Body, *w, w.Body)
		}
	}
}

// TestRestoreEventGrid_NotBuiltSo: a body that is not such a CloudEvent is
// refused, the event unchanged.
func TestRestoreEventGrid_NotBuiltSo(t *testing.T) {
	for _, body := range []string{`[1]`, `{"specversion":"1.0","id":"1"}`, `{"source":1,"time":"t"}`} {
		ev := &eventgrid.Event{ID: "1", Converted: true, Body: []byte(body)}
		if err := schema.RestoreEventGrid(ev); !errors.Is(err, schema.ErrNotRestorable) || string(ev.Body) != body || !ev.Converted {
			t.Errorf("%s: %v, %+v; want ErrNotRestorable and the event unchanged", body, err, ev)
		}
	}
}
