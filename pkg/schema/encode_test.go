package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// TestCanonicalRoundTrip checks that canonical bodies, delivered as an
// array, decode to themselves.
func TestCanonicalRoundTrip(t *testing.T) {
	evs := MustDecodeBatch(t, eventgrid.EventGridSchema, `[`+egFull+`,`+egFull+`]`)
	got := `[` + string(evs[0].Body) + `,` + string(evs[1].Body) + `]`
	if !json.Valid([]byte(got)) {
		t.Fatalf("not valid JSON: %s", got)
	}
	again := MustDecodeBatch(t, eventgrid.EventGridSchema, got)
	for i := range evs {
		if string(again[i].Body) != string(evs[i].Body) {
			t.Fatalf("event %d changed on a round trip: %s", i, again[i].Body)
		}
	}
}

func TestDataVersion(t *testing.T) {
	evs := MustDecodeBatch(t, eventgrid.EventGridSchema, `[`+egFull+`]`)
	if got := schema.DataVersion(evs[0].Body); got != evs[0].DataVersion || got == "" {
		t.Errorf("DataVersion = %q, want %q", got, evs[0].DataVersion)
	}
	if got := schema.DataVersion([]byte(`{"a":1}`)); got != "" {
		t.Errorf("DataVersion of a body without one = %q", got)
	}
}

func TestWithTopic(t *testing.T) {
	const canonical = `{"id":"1","topic":"t1","subject":"s","eventType":"et","eventTime":"x","dataVersion":"1","metadataVersion":"1"}`
	tests := []struct {
		name  string
		body  string
		topic string
		want  string
	}{
		{"Set", canonical, "cloud", `{"id":"1","topic":"cloud","subject":"s","eventType":"et","eventTime":"x","dataVersion":"1","metadataVersion":"1"}`},
		{"Null", canonical, "", `{"id":"1","topic":null,"subject":"s","eventType":"et","eventTime":"x","dataVersion":"1","metadataVersion":"1"}`},
		{"Escaped", canonical, `a"b`, `{"id":"1","topic":"a\"b","subject":"s","eventType":"et","eventTime":"x","dataVersion":"1","metadataVersion":"1"}`},
		{"DataHasTopicKey", `{"id":"1","topic":"t1","data":{"topic":"inner"}}`, "c", `{"id":"1","topic":"c","data":{"topic":"inner"}}`},
		{"TopicAlreadyNull", `{"id":"1","topic":null}`, "c", `{"id":"1","topic":"c"}`},
		{"NoTopic", `{"id":"1"}`, "c", `{"topic":"c","id":"1"}`},
		{"NoTopicEmptyObject", `{}`, "", `{"topic":null}`},
		{"NotAnObject", `[1]`, "c", `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			got := schema.WithTopic(body, tt.topic)
			if string(got) != tt.want {
				t.Fatalf("WithTopic = %s, want %s", got, tt.want)
			}
			if string(body) != tt.body {
				t.Fatalf("WithTopic modified its input: %s", body)
			}
			if !json.Valid(got) {
				t.Fatalf("WithTopic output is not valid JSON: %s", got)
			}
		})
	}
}

func TestWithTopic_DecodedEvent(t *testing.T) {
	evs := MustDecodeBatch(t, eventgrid.EventGridSchema, `[`+egFull+`]`)
	got := schema.WithTopic(evs[0].Body, "")
	const want = `{"id":"1","topic":null,"subject":"s","eventType":"et","eventTime":"2020-01-01T00:00:00Z","data":{"a":1},"dataVersion":"1.0","metadataVersion":"1"}`
	if string(got) != want {
		t.Fatalf("WithTopic = %s, want %s", got, want)
	}
	if &got[0] == &evs[0].Body[0] {
		t.Fatal("WithTopic returned the Body itself, want a copy")
	}
}
