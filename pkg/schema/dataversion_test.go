package schema_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// TestDataVersionOfDecodedEvents reads the dataVersion of bodies the
// publish path builds, with values that end in escapes and data that
// holds quotes, backslashes and the member names themselves.
func TestDataVersionOfDecodedEvents(t *testing.T) {
	versions := []string{"", "1.0", `a"b`, `a\`, `\\`, `"`, `\"`, `x\\"`, "é", "\u2028", `\u0022`}
	datas := []string{`null`, `{}`, `"s"`, `{"dataVersion":"inner"}`, `["\"","\\",",\"dataVersion\":\"x\""]`,
		`{"metadataVersion":"1"}`, `"\\\""`}
	for _, v := range versions {
		for _, d := range datas {
			in := `[{"id":"1","subject":"s","eventType":"t","eventTime":"2026-01-02T03:04:05Z","data":` + d +
				`,"dataVersion":` + strconv.Quote(v) + `}]`
			var s schema.Scratch
			evs, err := s.DecodeBatch(eventgrid.EventGridSchema, "topic", []byte(in), time.Now())
			if err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			body := evs[0].Body
			if got, want := schema.DataVersion(body), schema.DataVersionByScan(body); got != want || got != v {
				t.Errorf("DataVersion(%s) = %q; by scanning %q, published %q", body, got, want, v)
			}
			s.Reset()
		}
	}
}

// FuzzDataVersion checks reading from the end against scanning on any body
// a queue could hold: valid JSON without duplicate member names.
func FuzzDataVersion(f *testing.F) {
	for _, b := range []string{
		`{"id":"1","data":{},"dataVersion":"2","metadataVersion":"1"}`,
		`{"dataVersion":"a","metadataVersion":"1"}`,
		`{"DATAVERSION":"a","x":{"dataVersion":"b"},"dataVersion":"c","metadataVersion":"1"}`,
		`{"x":"\\","dataVersion":"\\\"","metadataVersion":"1"}`,
		`{"x":",\"dataVersion\":\"","dataVersion":"z","metadataVersion":"1"}`,
		`[1,"dataVersion":"a","metadataVersion":"1"}`,
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := rawjson.ValidStrict(body); err != nil {
			return
		}
		if got, want := schema.DataVersion(body), schema.DataVersionByScan(body); got != want {
			t.Fatalf("DataVersion(%s) = %q, want %q", body, got, want)
		}
	})
}
