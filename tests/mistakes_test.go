package tests_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMistakes_MisspeltMembersRefused: each misspelt name that a new user
// would write, and the broker once ignored (doing something other than
// what was written), is refused with 400 naming the member's path and the
// name it most likely meant; nothing is stored.
func TestMistakes_MisspeltMembersRefused(t *testing.T) {
	t.Parallel()
	b := startBroker(t, devEnv())
	createTopic(t, b.URL, "t", "EventGridSchema")
	sub := b.URL + "/topics/t/eventSubscriptions/s?" + apiVersion
	hook := webhookDest("http://127.0.0.1:9/x")
	for _, c := range []struct {
		name, url string
		body      any
		parts     []string
	}{
		{"FilterSubject", sub, map[string]any{"properties": map[string]any{"destination": hook,
			"filter": map[string]any{"subjectBeginWith": "/only/"}}},
			[]string{"properties.filter.subjectBeginWith", "did you mean subjectBeginsWith?"}},
		{"FilterEventTypes", sub, map[string]any{"properties": map[string]any{"destination": hook,
			"filter": map[string]any{"includedEventType": []string{"Only.This"}}}},
			[]string{"properties.filter.includedEventType", "did you mean includedEventTypes?"}},
		{"RetryPolicy", sub, map[string]any{"properties": map[string]any{"destination": hook,
			"retryPolicyy": map[string]any{"maxDeliveryAttempts": 3}}},
			[]string{"properties.retryPolicyy", "did you mean retryPolicy?"}},
		{"Batching", sub, map[string]any{"properties": map[string]any{
			"destination": webhookDest("http://127.0.0.1:9/x", "maxEventsPerBatchh", 5)}},
			[]string{"properties.destination.properties.maxEventsPerBatchh", "did you mean maxEventsPerBatch?"}},
		{"TopicSchema", b.URL + "/topics/custom?" + apiVersion, map[string]any{"properties": map[string]any{"inputSchemma": "CustomEventSchema"}},
			[]string{"properties.inputSchemma", "did you mean inputSchema?"}},
		{"CloudOnly", sub, map[string]any{"properties": map[string]any{"destination": hook, "expirationTimeUtc": "2030-01-01T00:00:00Z"}},
			[]string{"properties.expirationTimeUtc is not supported here"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustRefuse(t, http.MethodPut, c.url, "application/json", c.body, c.parts)
		})
	}
	mustDo(t, http.MethodGet, sub, "", nil, http.StatusNotFound)
	mustDo(t, http.MethodGet, b.URL+"/topics/custom?"+apiVersion, "", nil, http.StatusNotFound)
}

// TestMistakes_DeclaredEntryRefused: a declared subscription with a
// misspelt member is skipped like any invalid entry, its error naming the
// member, while the rest of the declaration applies.
func TestMistakes_DeclaredEntryRefused(t *testing.T) {
	t.Parallel()
	k := newSink(t, nil)
	doc, _ := json.Marshal(map[string]any{
		"topics": map[string]any{
			"sensors": map[string]any{"inputSchema": "EventGridSchema"},
			"typo":    map[string]any{"inputSchemma": "CustomEventSchema"},
		},
		"eventSubscriptions": map[string]any{
			"good": map[string]any{"topic": "sensors", "destination": webhookDest(k.URL),
				"filter": map[string]any{"subjectBeginsWith": "/only/"}},
			"bad": map[string]any{"topic": "sensors", "destination": webhookDest(k.URL),
				"filter": map[string]any{"subjectBeginWith": "/only/"}},
		},
	})
	b := startBroker(t, merge(devEnv(), "desired_config", string(doc)))
	waitReady(t, b) // the declaration is applied once the broker listens
	mustDo(t, http.MethodGet, b.URL+"/topics/sensors/eventSubscriptions/good?"+apiVersion, "", nil, http.StatusOK)
	mustDo(t, http.MethodGet, b.URL+"/topics/sensors/eventSubscriptions/bad?"+apiVersion, "", nil, http.StatusNotFound)
	mustDo(t, http.MethodGet, b.URL+"/topics/typo?"+apiVersion, "", nil, http.StatusNotFound)
	out := b.Output()
	for _, want := range []string{"subjectBeginWith", "did you mean subjectBeginsWith?", "inputSchemma", "did you mean inputSchema?"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not mention %q:\n%s", want, out)
		}
	}
	// The good subscription filters as declared: only /only/ arrives.
	evs := egEvents("decl", 2)
	evs[1]["subject"] = "/only/1"
	publish(t, b.URL, "sensors", evs)
	got := k.waitAccepted(t, 1, 10*time.Second)
	if got["decl1"] != 1 || got["decl0"] != 0 {
		t.Errorf("accepted %v, want only decl1", got)
	}
}

// TestMistakes_UnknownEnvironmentKeys: a misspelt key in the environment
// gets one warning naming it and the nearest key, and the broker starts
// with its defaults.
func TestMistakes_UnknownEnvironmentKeys(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "broker__defaultMaxDeliveryAtempts", "3", "api__port", "5899", "console__enable", "true"))
	const msg = "environment variable ignored: it is not a configuration key of this version (docs/configuration.md)"
	warned := map[string]any{}
	for _, l := range b.Logs(msg) {
		if l["level"] != "warn" {
			t.Errorf("not a warning: %v", l)
		}
		warned[l["key"].(string)] = l["nearestKey"]
	}
	want := map[string]any{
		"broker__defaultMaxDeliveryAtempts": "broker__defaultMaxDeliveryAttempts",
		"api__port":                         "api__httpPort",
		"console__enable":                   "console__enabled",
	}
	if len(warned) != len(want) { // devEnv's known keys are not warned about
		t.Errorf("warnings %v, want %v", warned, want)
	}
	for k, v := range want {
		if got, ok := warned[k]; !ok || got != v {
			t.Errorf("warning for %s: nearest %v (present %v), want %v", k, got, ok, v)
		}
	}
}
