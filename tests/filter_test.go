package tests_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFilter_NewerOperators: the cloud API's newer operators and filtering
// on arrays, end to end; GET echoes the filter as written.
func TestFilter_NewerOperators(t *testing.T) {
	t.Parallel()
	b := startBroker(t, devEnv())
	k := newSink(t, nil)
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{
		"destination": webhookDest(k.URL),
		"filter": map[string]any{
			"enableAdvancedFilteringOnArrays": true,
			"advancedFilters": []any{
				map[string]any{"operatorType": "NumberInRange", "key": "data.readings", "values": []any{[]any{10, 20}}},
				map[string]any{"operatorType": "IsNotNull", "key": "data.site"},
				map[string]any{"operatorType": "StringNotContains", "key": "data.label", "values": []any{"test"}},
			},
		},
	})
	ev := func(id string, data map[string]any) map[string]any {
		return map[string]any{"id": id, "eventType": "T", "subject": "s", "eventTime": "2026-01-01T00:00:00Z", "dataVersion": "1", "data": data}
	}
	publish(t, b.URL, "t", []any{
		ev("in", map[string]any{"readings": []any{3, 15}, "site": "a"}),                      // 15 in range; label missing
		ev("out-range", map[string]any{"readings": []any{3, 25}, "site": "a"}),               // nothing in range
		ev("out-null", map[string]any{"readings": []any{12}, "site": nil}),                   // site null
		ev("out-label", map[string]any{"readings": []any{12}, "site": "a", "label": "Test"}), // label contains "test"
		ev("in2", map[string]any{"readings": []any{20}, "site": "b", "label": "prod"}),
	})
	got := k.waitAccepted(t, 2, 10*time.Second)
	publish(t, b.URL, "t", []any{ev("last", map[string]any{"readings": []any{10}, "site": "c"})})
	got = k.waitAccepted(t, 3, 10*time.Second)
	if len(got) != 3 || got["in"] != 1 || got["in2"] != 1 || got["last"] != 1 {
		t.Errorf("delivered %v, want in, in2 and last", got)
	}
	body := string(mustDo(t, http.MethodGet, b.URL+"/topics/t/eventSubscriptions/s?"+apiVersion, "", nil, 200))
	for _, want := range []string{`"enableAdvancedFilteringOnArrays":true`, `"operatorType":"NumberInRange"`, `"values":[[10,20]]`, `"operatorType":"IsNotNull"`} {
		if !strings.Contains(body, want) {
			t.Errorf("GET lacks %s: %s", want, body)
		}
	}
}
