package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// apiError reads the API's error envelope.
func apiError(t testing.TB, body []byte) (code, message string) {
	t.Helper()
	var env struct {
		Error struct {
			Details struct{ Code, Message string }
		}
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("error body is not the API's envelope: %v: %s", err, body)
	}
	return env.Error.Details.Code, env.Error.Details.Message
}

// mustRefuse sends body and fails t unless the broker answers 400 with a
// message holding every one of parts.
func mustRefuse(t testing.TB, method, url, contentType string, body any, parts []string, header ...string) {
	t.Helper()
	status, _, rb := do(t, nil, method, url, contentType, body, header...)
	_, msg := apiError(t, rb)
	if status != http.StatusBadRequest {
		t.Fatalf("%s %s = %d, want 400: %s", method, url, status, rb)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("%s %s: message %q does not mention %q", method, url, msg, p)
		}
	}
}

// TestStrict_FilterBypassRefused: an event naming a member twice, which a
// filter would read one way and the receiver another, is refused at the
// door in every schema and mode, so it can never slip past a filter.
func TestStrict_FilterBypassRefused(t *testing.T) {
	t.Parallel()
	b := startBroker(t, devEnv())
	k := newSink(t, nil)
	for topic, schema := range map[string]string{"eg": "EventGridSchema", "ce": "CloudEventSchemaV1_0", "custom": "CustomEventSchema"} {
		createTopic(t, b.URL, topic, schema)
		createSubscription(t, b.URL, topic, "guarded", map[string]any{
			"destination": webhookDest(k.URL),
			"filter": map[string]any{"advancedFilters": []any{
				map[string]any{"operatorType": "NumberLessThan", "key": "data.amount", "value": 100},
				map[string]any{"operatorType": "StringIn", "key": "data.role", "values": []any{"viewer"}},
			}},
		})
	}
	events := func(topic string) string { return b.URL + "/topics/" + topic + "/events?" + apiVersion }
	eg := func(id, data string) string {
		return `{"id":"` + id + `","subject":"s","eventType":"T","eventTime":"2026-01-01T00:00:00Z","dataVersion":"1","data":` + data + `}`
	}
	ce := func(id, data string) string {
		return `{"specversion":"1.0","id":"` + id + `","source":"/s","type":"T","data":` + data + `}`
	}
	custom := func(id, data string) string { return `{"id":"` + id + `","data":` + data + `}` }
	const (
		amount = `{"amount":5,"role":"viewer","amount":99999}`
		role   = `{"amount":5,"role":"viewer","role":"admin"}`
		folded = `{"amount":5,"role":"viewer","Role":"admin"}`
	)
	cases := []struct {
		name, url, contentType, body string
		parts                        []string
		header                       []string
	}{
		{"EventGridAmount", events("eg"), "application/json", "[" + eg("ok", `{"amount":1,"role":"viewer"}`) + "," + eg("bad", amount) + "]",
			[]string{"event at index 1", `"data.amount"`, "more than once"}, nil},
		{"EventGridRole", events("eg"), "application/json", "[" + eg("bad", role) + "]", []string{"event at index 0", `"data.role"`}, nil},
		{"EventGridRoleOtherCase", events("eg"), "application/json", "[" + eg("bad", folded) + "]", []string{`"data.Role"`}, nil},
		{"EventGridSingle", b.URL + "/topics/eg/events/bad?" + apiVersion, "application/json", eg("bad", amount), []string{`"data.amount"`}, nil},
		{"CloudEventsStructured", events("ce"), "application/cloudevents+json; charset=utf-8", ce("bad", role), []string{"event at index 0", `"data.role"`}, nil},
		{"CloudEventsBatch", events("ce"), "application/cloudevents-batch+json", "[" + ce("ok", `{}`) + "," + ce("bad", amount) + "]",
			[]string{"event at index 1", `"data.amount"`}, nil},
		{"CloudEventsBinary", events("ce"), "application/json", amount, []string{"event at index 0", `"data.amount"`},
			[]string{"ce-specversion", "1.0", "ce-id", "bad", "ce-source", "/s", "ce-type", "T"}},
		{"Custom", events("custom"), "application/json", "[" + custom("bad", role) + "]", []string{"event at index 0", `"data.role"`}, nil},
		{"CustomTopLevel", events("custom"), "application/json", `[{"id":"bad","id":"other"}]`, []string{`"id"`}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustRefuse(t, http.MethodPost, c.url, c.contentType, c.body, c.parts, c.header...)
		})
	}
	// The guarded subscriptions still work: an event that passes arrives,
	// and after it nothing refused has.
	publish(t, b.URL, "eg", json.RawMessage("["+eg("pass", `{"amount":5,"role":"Viewer"}`)+"]"))
	got := k.waitAccepted(t, 1, 10*time.Second)
	if len(got) != 1 || got["pass"] != 1 {
		t.Fatalf("delivered %v, want only the event that passes", got)
	}
}

// TestStrict_EventGridSchemaFields: EventGridSchema checks what CloudEvents
// checks, and every schema refuses text that is not UTF-8.
func TestStrict_EventGridSchemaFields(t *testing.T) {
	t.Parallel()
	b := startBroker(t, devEnv())
	createTopic(t, b.URL, "eg", "EventGridSchema")
	createTopic(t, b.URL, "custom", "CustomEventSchema")
	ev := func(id, typ, at string) string {
		return `[{"id":"` + id + `","subject":"s","eventType":"` + typ + `","eventTime":"` + at + `","dataVersion":"1","data":{}}]`
	}
	url := b.URL + "/topics/eg/events?" + apiVersion
	for _, c := range []struct {
		name, body string
		parts      []string
	}{
		{"NotATime", ev("1", "T", "notatime"), []string{`"eventTime" must be an RFC 3339 timestamp, not "notatime"`}},
		{"NoSuchDate", ev("1", "T", "2026-13-45T99:00:00Z"), []string{`"eventTime" must be an RFC 3339 timestamp`}},
		{"EmptyID", ev("", "T", "2026-01-01T00:00:00Z"), []string{`"id" must not be empty`}},
		{"EmptyEventType", ev("1", "", "2026-01-01T00:00:00Z"), []string{`"eventType" must not be empty`}},
		{"NotUTF8", ev("1", "T\xff", "2026-01-01T00:00:00Z"), []string{`"eventType" is not valid UTF-8`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustRefuse(t, http.MethodPost, url, "application/json", c.body, append(c.parts, "event at index 0"))
		})
	}
	mustRefuse(t, http.MethodPost, b.URL+"/topics/custom/events?"+apiVersion, "application/json", "[{\"s\":\"a\xc0\"}]",
		[]string{"event at index 0", `"s" is not valid UTF-8`})
	publish(t, b.URL, "eg", json.RawMessage(ev("1", "T", "2026-01-01T00:00:00.5+01:00")))
}

// TestStrict_SubscriptionRefusals: what could never be delivered is refused
// at PUT, with the field named.
func TestStrict_SubscriptionRefusals(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "api__filterLimits__maxIncludedEventTypes", "20"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	put := b.URL + "/topics/t/eventSubscriptions/s?" + apiVersion
	static := func(value string) map[string]any {
		return webhookDest("http://127.0.0.1:9/x", "deliveryAttributeMappings", []any{
			map[string]any{"name": "x-h", "type": "Static", "properties": map[string]any{"value": value}}})
	}
	types := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = fmt.Sprint("Type", i)
		}
		return out
	}
	const field = "properties.destination.properties."
	for _, c := range []struct {
		name  string
		props map[string]any
		parts []string
	}{
		{"NoHost", map[string]any{"destination": webhookDest("http://:80/x")}, []string{field + "endpointUrl must name a host"}},
		{"PortTooLarge", map[string]any{"destination": webhookDest("http://127.0.0.1:99999/x")}, []string{field + "endpointUrl port 99999 is out of range"}},
		{"PortNotNumeric", map[string]any{"destination": webhookDest("http://127.0.0.1:http/x")}, []string{field + "endpointUrl is not a valid URL"}},
		{"AttemptsString", map[string]any{"destination": webhookDest("http://127.0.0.1:9/x"), "retryPolicy": map[string]any{"maxDeliveryAttempts": "5"}},
			[]string{"properties.retryPolicy.maxDeliveryAttempts must be a number, not a string"}},
		{"TimeToLiveString", map[string]any{"destination": webhookDest("http://127.0.0.1:9/x"), "retryPolicy": map[string]any{"eventTimeToLiveInMinutes": "30"}},
			[]string{"properties.retryPolicy.eventTimeToLiveInMinutes must be a number, not a string"}},
		{"BatchString", map[string]any{"destination": webhookDest("http://127.0.0.1:9/x", "maxEventsPerBatch", "10")},
			[]string{field + "maxEventsPerBatch must be a number, not a string"}},
		{"StaticControlCharacter", map[string]any{"destination": static("a\x01b")},
			[]string{field + "deliveryAttributeMappings[0].properties.value holds the control character U+0001"}},
		{"TooManyEventTypes", map[string]any{"destination": webhookDest("http://127.0.0.1:9/x"), "filter": map[string]any{"includedEventTypes": types(21)}},
			[]string{"filter.includedEventTypes: 21 event types exceed the limit of 20", "api__filterLimits__maxIncludedEventTypes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustRefuse(t, http.MethodPut, put, "application/json", map[string]any{"properties": c.props}, c.parts)
		})
	}
	mustDo(t, http.MethodPut, put, "application/json", map[string]any{"properties": map[string]any{
		"destination": static("a\tb"), "retryPolicy": map[string]any{"maxDeliveryAttempts": 5},
		"filter": map[string]any{"includedEventTypes": types(20)}}}, http.StatusOK)
}
