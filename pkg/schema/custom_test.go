package schema_test

import (
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

func TestDecodeBatch_CustomEventSchema(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"OddSpacingAndKeyOrder", "[\n\t{ \"z\" : 1 ,\"a\":[ ] } ,{\"Id\":\"x\",\"iD2\":\"y\"}\r\n]",
			[]string{`{ "z" : 1 ,"a":[ ] }`, `{"Id":"x","iD2":"y"}`}},
		{"EmptyObject", `[{}]`, []string{`{}`}},
		{"EscapesAndUnicodeKept", `[{"s":"\u00e9\/\"","é":-0.0E+1,"n":null}]`, []string{`{"s":"\u00e9\/\"","é":-0.0E+1,"n":null}`}},
		{"NoEnvelopeChecks", `[{"topic":"other","metadataVersion":5}]`, []string{`{"topic":"other","metadataVersion":5}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := MustDecodeBatch(t, eventgrid.CustomEventSchema, tt.body)
			if len(evs) != len(tt.want) {
				t.Fatalf("got %d events, want %d", len(evs), len(tt.want))
			}
			for i, ev := range evs {
				if string(ev.Body) != tt.want[i] {
					t.Errorf("event %d Body = %q, want %q", i, ev.Body, tt.want[i])
				}
				if ev.ID != "" || ev.Type != "" || ev.Subject != "" || ev.HasSubject || ev.DataVersion != "" {
					t.Errorf("event %d has envelope fields: %+v", i, *ev)
				}
			}
		})
	}
}
