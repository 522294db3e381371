package registry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name  string
		input string
		max   int
		valid bool
	}{
		{"Empty", "", 128, false},
		{"One", "a", 128, true},
		{"AllClasses", "azAZ09-_", 128, true},
		{"AtMax", strings.Repeat("x", 128), 128, true},
		{"OverMax", strings.Repeat("x", 129), 128, false},
		{"CustomMax", "abcd", 3, false},
		{"Dot", "a.b", 128, false},
		{"Slash", "a/b", 128, false},
		{"Percent", "a%2Fb", 128, false},
		{"Space", "a b", 128, false},
		{"Unicode", "é", 128, false},
		{"NUL", "a\x00", 128, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := registry.ValidateName(tt.input, "Topic", tt.max)
			if tt.valid {
				if err != nil {
					t.Fatalf("ValidateName(%q) = %v", tt.input, err)
				}
				return
			}
			mustCode(t, err, eventgrid.EInvalidName)
			if !strings.Contains(eventgrid.ErrorMessage(err), "Topic") {
				t.Errorf("message %q does not say what was named", eventgrid.ErrorMessage(err))
			}
		})
	}
}

// TestRegistry_ValidateSubscription checks the rules the registry applies
// to a decoded subscription, whoever decoded it.
func TestRegistry_ValidateSubscription(t *testing.T) {
	strict, _ := MustNew(t, func(o *registry.Options) { o.WebhookHTTPSOnly = true })
	lenient, _ := MustNew(t, func(o *registry.Options) {
		o.EventGridHTTPSOnly, o.EventGridAllowInvalidHostnames = false, true
	})
	skip, _ := MustNew(t, func(o *registry.Options) { o.SkipEventGridURLValidation = true })
	for _, r := range []*registry.Registry{strict, lenient, skip} {
		MustPutTopic(t, r, "t", eventgrid.EventGridSchema)
	}
	const egURL = "https://x.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01"
	eg := func(url, key string) eventgrid.Destination {
		return eventgrid.Destination{EndpointType: eventgrid.EventGrid, EndpointURL: url, SASKey: key}
	}
	wh := func(url string) eventgrid.Destination {
		return eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: url}
	}
	tests := []struct {
		name string
		reg  *registry.Registry
		edit func(s *eventgrid.EventSubscription)
		code string // "" when valid
	}{
		{"WebhookHTTPS", strict, func(s *eventgrid.EventSubscription) { s.Destination = wh("https://h/x") }, ""},
		{"WebhookHTTPRefused", strict, func(s *eventgrid.EventSubscription) { s.Destination = wh("http://h/x") }, eventgrid.EInvalidDestination},
		{"WebhookNoURL", strict, func(s *eventgrid.EventSubscription) { s.Destination = wh("") }, eventgrid.EInvalidDestination},
		{"WebhookRelativeURL", strict, func(s *eventgrid.EventSubscription) { s.Destination = wh("/x") }, eventgrid.EInvalidDestination},
		{"WebhookBadURL", strict, func(s *eventgrid.EventSubscription) { s.Destination = wh("https://h/%zz") }, eventgrid.EInvalidDestination},
		{"NoEndpointType", strict, func(s *eventgrid.EventSubscription) { s.Destination.EndpointType = "" }, eventgrid.EInvalidDestination},
		{"UnsupportedEndpointType", strict, func(s *eventgrid.EventSubscription) { s.Destination.EndpointType = "EdgeHub" }, eventgrid.EInvalidDestination},
		{"EventGrid", strict, func(s *eventgrid.EventSubscription) { s.Destination = eg(egURL, "k") }, ""},
		{"EventGridChina", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = eg("https://x.chinaeast-1.eventgrid.azure.cn./api/events?api-version=2018-01-01", "k")
		}, ""},
		{"EventGridNoKey", strict, func(s *eventgrid.EventSubscription) { s.Destination = eg(egURL, "") }, eventgrid.EInvalidDestination},
		{"EventGridHTTP", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = eg(strings.Replace(egURL, "https", "http", 1), "k")
		}, eventgrid.EInvalidDestination},
		{"EventGridHTTPAllowed", lenient, func(s *eventgrid.EventSubscription) {
			s.Destination = eg(strings.Replace(egURL, "https", "http", 1), "k")
		}, ""},
		{"EventGridForeignHost", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = eg("https://example.com/api/events?api-version=2018-01-01", "k")
		}, eventgrid.EInvalidDestination},
		{"EventGridForeignHostAllowed", lenient, func(s *eventgrid.EventSubscription) {
			s.Destination = eg("https://example.com/api/events?api-version=2018-01-01", "k")
		}, ""},
		{"EventGridWrongPathAllowedHost", lenient, func(s *eventgrid.EventSubscription) {
			s.Destination = eg("https://example.com/x?api-version=2018-01-01", "k")
		}, eventgrid.EInvalidDestination},
		{"EventGridURLChecksSkipped", skip, func(s *eventgrid.EventSubscription) { s.Destination = eg("https://example.com/x", "k") }, ""},
		{"EventGridKeyStillRequiredWhenSkipped", skip, func(s *eventgrid.EventSubscription) { s.Destination = eg("https://example.com/x", "") }, eventgrid.EInvalidDestination},
		{"Batching", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.Destination.MaxEventsPerBatch, s.Destination.PreferredBatchSizeInKilobytes = 50, 1033
		}, ""},
		{"51Events", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.Destination.MaxEventsPerBatch = 51
		}, eventgrid.EInvalidDelivery},
		{"NegativeEvents", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.Destination.MaxEventsPerBatch = -1
		}, eventgrid.EInvalidDelivery},
		{"1034KB", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.Destination.PreferredBatchSizeInKilobytes = 1034
		}, eventgrid.EInvalidDelivery},
		{"NegativeKB", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.Destination.PreferredBatchSizeInKilobytes = -5
		}, eventgrid.EInvalidDelivery},
		{"RetryLimits", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 30, EventExpiryInMinutes: 1440}
		}, ""},
		{"RetryUnset", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.RetryPolicy = &eventgrid.RetryPolicy{}
		}, ""},
		{"31Attempts", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 31}
		}, eventgrid.EInvalidRetryPolicy},
		{"NegativeAttempts", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: -1}
		}, eventgrid.EInvalidRetryPolicy},
		{"1441Minutes", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.RetryPolicy = &eventgrid.RetryPolicy{EventExpiryInMinutes: 1441}
		}, eventgrid.EInvalidRetryPolicy},
		{"NegativeMinutes", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.RetryPolicy = &eventgrid.RetryPolicy{EventExpiryInMinutes: -1}
		}, eventgrid.EInvalidRetryPolicy},
		{"Persisted", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.PersistencePolicy = &eventgrid.PersistencePolicy{IsPersisted: true}
		}, eventgrid.EInvalidPersistence},
		{"NotPersisted", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.PersistencePolicy = &eventgrid.PersistencePolicy{}
		}, ""},
		{"DeliverySchemaMismatch", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.EventDeliverySchema = eventgrid.CustomEventSchema
		}, eventgrid.EInvalidSchema},
		{"UnknownOperator", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.Filter = &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "Foo", Key: "data.x", Value: json.RawMessage(`1`)}}}
		}, eventgrid.EInvalidFilter},
		{"BadFilterValue", strict, func(s *eventgrid.EventSubscription) {
			s.Destination = wh("https://h/x")
			s.Filter = &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "NumberLessThan", Key: "data.x", Value: json.RawMessage(`"abc"`)}}}
		}, eventgrid.EInvalidFilter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := hook("t", "s")
			tt.edit(&sub)
			stored, _, err := tt.reg.PutSubscription(t.Context(), sub)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("PutSubscription: %v", err)
				}
				if stored.EventDeliverySchema != eventgrid.EventGridSchema {
					t.Errorf("delivery schema = %q, want the topic's", stored.EventDeliverySchema)
				}
				return
			}
			mustCode(t, err, tt.code)
		})
	}
}

func TestRegistry_OperatorCanonicalised(t *testing.T) {
	r, _ := MustNew(t, nil)
	MustPutTopic(t, r, "t", "")
	sub := hook("t", "s")
	sub.Filter = &eventgrid.Filter{AdvancedFilters: []eventgrid.AdvancedFilter{
		{OperatorType: "numberin", Key: "data.n", Values: []json.RawMessage{json.RawMessage(`1`)}},
		{OperatorType: "STRINGCONTAINS", Key: "subject", Values: []json.RawMessage{json.RawMessage(`"x"`)}},
	}}
	stored, _, err := r.PutSubscription(t.Context(), sub)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, af := range stored.Filter.AdvancedFilters {
		ops = append(ops, af.OperatorType)
	}
	if strings.Join(ops, ",") != "NumberIn,StringContains" {
		t.Errorf("operators = %v, want canonical spellings", ops)
	}
}
