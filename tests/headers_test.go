package tests_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHeaders_CustomDeliveryProperties: static and dynamic custom headers
// (docs/design.md#custom-delivery-properties) reach a real
// subscriber; a secret value is never returned or logged;
// the broker's own header names are refused.
func TestHeaders_CustomDeliveryProperties(t *testing.T) {
	t.Parallel()
	b := startBroker(t, merge(devEnv(), "broker__logDeliverySuccess", "true"))
	k := newSink(t, nil)
	createTopic(t, b.URL, "t", "EventGridSchema")
	const secret = "Bearer s3cr3t-token-value"
	dest := webhookDest(k.URL, "deliveryAttributeMappings", []any{
		map[string]any{"name": "Authorization", "type": "Static", "properties": map[string]any{"value": secret, "isSecret": true}},
		map[string]any{"name": "x-tenant", "type": "static", "properties": map[string]any{"value": "north"}},
		map[string]any{"name": "x-device", "type": "Dynamic", "properties": map[string]any{"sourceField": "data.deviceId"}},
		map[string]any{"name": "x-level", "type": "Dynamic", "properties": map[string]any{"sourceField": "data.level"}},
		map[string]any{"name": "x-object", "type": "Dynamic", "properties": map[string]any{"sourceField": "data.nested"}},
		map[string]any{"name": "x-subject", "type": "Dynamic", "properties": map[string]any{"sourceField": "subject"}},
	})
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": dest})
	publish(t, b.URL, "t", []map[string]any{{"id": "1", "eventType": "T", "subject": "room/7", "eventTime": "2026-01-01T00:00:00Z",
		"dataVersion": "1", "data": map[string]any{"deviceId": "dev-42", "level": 3.5, "nested": map[string]any{"a": 1}}}})
	k.waitAccepted(t, 1, 10*time.Second)
	h := k.requests()[0].header
	for name, want := range map[string]string{"Authorization": secret, "X-Tenant": "north", "X-Device": "dev-42", "X-Level": "3.5", "X-Subject": "room/7"} {
		if got := h.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if h.Values("X-Object") != nil {
		t.Errorf("an object value was sent: %q", h.Get("X-Object"))
	}
	body := string(mustDo(t, http.MethodGet, b.URL+"/topics/t/eventSubscriptions/s?"+apiVersion, "", nil, 200))
	if strings.Contains(body, "s3cr3t") || !strings.Contains(body, `"value":"north"`) || !strings.Contains(body, `"sourceField":"data.deviceId"`) {
		t.Errorf("GET shows %s", body)
	}
	if strings.Contains(b.Output(), "s3cr3t") {
		t.Error("the secret header value reached the log")
	}
	for _, name := range []string{"aeg-event-type", "Content-Type", "webhook-id", "ce-id", "Host"} {
		code, _, resp := do(t, nil, http.MethodPut, b.URL+"/topics/t/eventSubscriptions/bad?"+apiVersion, "application/json", map[string]any{
			"properties": map[string]any{"destination": webhookDest(k.URL, "deliveryAttributeMappings", []any{
				map[string]any{"name": name, "type": "Static", "properties": map[string]any{"value": "x"}}})}})
		if code != http.StatusBadRequest || !strings.Contains(string(resp), "deliveryAttributeMappings[0].name") {
			t.Errorf("reserved header %s: %d %s", name, code, resp)
		}
	}
	tooMany := []any{}
	for i := range 11 {
		tooMany = append(tooMany, map[string]any{"name": "x-h" + string(rune('a'+i)), "type": "Static", "properties": map[string]any{"value": "v"}})
	}
	code, _, resp := do(t, nil, http.MethodPut, b.URL+"/topics/t/eventSubscriptions/bad?"+apiVersion, "application/json", map[string]any{
		"properties": map[string]any{"destination": webhookDest(k.URL, "deliveryAttributeMappings", tooMany)}})
	if code != http.StatusBadRequest || !strings.Contains(string(resp), "at most 10") {
		t.Errorf("11 mappings: %d %s", code, resp)
	}
	long := strings.Repeat("v", 4097)
	code, _, resp = do(t, nil, http.MethodPut, b.URL+"/topics/t/eventSubscriptions/bad?"+apiVersion, "application/json", map[string]any{
		"properties": map[string]any{"destination": webhookDest(k.URL, "deliveryAttributeMappings", []any{
			map[string]any{"name": "x-long", "type": "Static", "properties": map[string]any{"value": long}}})}})
	if code != http.StatusBadRequest || !strings.Contains(string(resp), "4096") {
		t.Errorf("a 4,097-byte value: %d %s", code, resp)
	}
}
