package schema_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// TestDecode_KeepsNothingOfTheBody checks that the caller may reuse the
// request body once decoding returns: every event's body and strings
// survive the body being overwritten.
func TestDecode_KeepsNothingOfTheBody(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name   string
		decode func(body []byte) ([]*eventgrid.Event, error)
		body   string
	}{
		{"EventGridSchema", func(b []byte) ([]*eventgrid.Event, error) {
			return schema.DecodeBatch(eventgrid.EventGridSchema, "t", b, now)
		}, `[{"id":"a","subject":"s","eventType":"T","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1","data":{"k":[1,2]}},` +
			`{"id":"b","subject":"s2","eventType":"T2","eventTime":"2020-01-01T00:00:00Z","dataVersion":"2"}]`},
		{"CustomEventSchema", func(b []byte) ([]*eventgrid.Event, error) {
			return schema.DecodeBatch(eventgrid.CustomEventSchema, "t", b, now)
		}, `[{"a" : 1}, {"b":[true]}]`},
		{"CloudEvents", func(b []byte) ([]*eventgrid.Event, error) {
			return schema.DecodeBatch(eventgrid.CloudEventSchemaV1_0, "t", b, now)
		}, `[{"specversion":"1.0","id":"c","source":"/s","type":"T","subject":"x","data":"d"}]`},
		{"Binary", func(b []byte) ([]*eventgrid.Event, error) {
			h := http.Header{"Ce-Specversion": {"1.0"}, "Ce-Id": {"i"}, "Ce-Source": {"/s"}, "Ce-Type": {"T"}, "Content-Type": {"application/json"}}
			ev, err := schema.DecodeBinary(h, b, "", now)
			return []*eventgrid.Event{ev}, err
		}, `{"payload":[1,2,3]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			events, err := tt.decode(body)
			if err != nil {
				t.Fatal(err)
			}
			type snapshot struct{ id, typ, subject, dv, body string }
			var before []snapshot
			for _, ev := range events {
				before = append(before, snapshot{ev.ID, ev.Type, ev.Subject, ev.DataVersion, string(ev.Body)})
			}
			copy(body, bytes.Repeat([]byte{'#'}, len(body)))
			for i, ev := range events {
				if got := (snapshot{ev.ID, ev.Type, ev.Subject, ev.DataVersion, string(ev.Body)}); got != before[i] {
					t.Errorf("event %d changed when the request body was reused: %+v, was %+v", i, got, before[i])
				}
			}
		})
	}
}
