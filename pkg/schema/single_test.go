package schema_test

import (
	"bytes"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// FuzzDecodeSingleEventBatch checks that a batch of one event, which
// DecodeBatch reads without walking the array, decodes as the first event
// of a batch of two does: the same body, or the same error.
func FuzzDecodeSingleEventBatch(f *testing.F) {
	for i, ev := range []string{egFull, ceFull, `{"z":1}`, `{}`, `1`, `"x"`, `[]`, `{"id":"1"}`, `{"a":"\u00e9"}`} {
		for s := range fuzzSchemas {
			f.Add(uint8(s+i), []byte(ev), []byte(" \n"))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, ev, space []byte) {
		if len(bytes.Trim(space, " \t\r\n")) != 0 || !rawjson.Valid(ev) {
			return // what is not one JSON value fails before it is decoded
		}
		s := fuzzSchemas[int(which)%len(fuzzSchemas)]
		one := append(append(append(append([]byte("["), space...), ev...), space...), ']')
		two := append(append(append(append(append([]byte("["), space...), ev...), ','), ev...), ']')
		got, gotErr := schema.DecodeBatch(s, "t1", one, accepted)
		want, wantErr := schema.DecodeBatch(s, "t1", two, accepted)
		switch {
		case gotErr != nil && wantErr != nil:
			if eventgrid.ErrorMessage(gotErr) != eventgrid.ErrorMessage(wantErr) {
				t.Fatalf("%s: error %q, as the first of two %q", one, gotErr, wantErr)
			}
		case gotErr != nil:
			t.Fatalf("%s: error %q, as the first of two none", one, gotErr)
		case wantErr == nil:
			if len(got) != 1 || !bytes.Equal(got[0].Body, want[0].Body) {
				t.Fatalf("%s: decoded %q, as the first of two %q", one, got[0].Body, want[0].Body)
			}
		}
	})
}
