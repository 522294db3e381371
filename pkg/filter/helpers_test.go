package filter_test

import (
	"encoding/json"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
)

// MustCompile compiles f for schema with the default limits or fails tb.
func MustCompile(tb testing.TB, f *eventgrid.Filter, schema eventgrid.InputSchema) *filter.Matcher {
	tb.Helper()
	m, err := filter.Compile(f, schema, filter.DefaultLimits)
	if err != nil {
		tb.Fatalf("Compile: %v", err)
	}
	return m
}

// one builds an advanced filter with a single value, given as JSON text.
func one(op, key, value string) eventgrid.AdvancedFilter {
	return eventgrid.AdvancedFilter{OperatorType: op, Key: key, Value: json.RawMessage(value)}
}

// many builds an advanced filter with a list of values, given as JSON text.
func many(op, key string, values ...string) eventgrid.AdvancedFilter {
	af := eventgrid.AdvancedFilter{OperatorType: op, Key: key, Values: []json.RawMessage{}}
	for _, v := range values {
		af.Values = append(af.Values, json.RawMessage(v))
	}
	return af
}

// egEvent returns an EventGridSchema event in canonical form with the given
// data (JSON text).
func egEvent(data string) *eventgrid.Event {
	return &eventgrid.Event{
		ID: "1", Type: "E", Subject: "/a/b", HasSubject: true, DataVersion: "1",
		Body: []byte(`{"id":"1","topic":"t","subject":"/a/b","eventType":"E","eventTime":"2020-01-01T00:00:00Z",` +
			`"data":` + data + `,"dataVersion":"1","metadataVersion":"1"}`),
	}
}

// subjectEvent returns an EventGridSchema event of type typ and subject subj.
func subjectEvent(typ, subj string) *eventgrid.Event {
	ev := egEvent(`{}`)
	ev.Type, ev.Subject = typ, subj
	return ev
}
