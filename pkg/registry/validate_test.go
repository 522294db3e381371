package registry_test

import (
	"cmp"
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
// to a decoded subscription, whoever decoded it, besides those of its
// destination's type (destinations_test.go).
func TestRegistry_ValidateSubscription(t *testing.T) {
	strict, _ := MustNew(t, func(o *registry.Options) { o.WebhookHTTPSOnly = true })
	MustPutTopic(t, strict, "t", eventgrid.EventGridSchema)
	wh := func(url string) eventgrid.Destination {
		return eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: url}
	}
	tests := []struct {
		name string
		reg  *registry.Registry
		edit func(s *eventgrid.EventSubscription)
		code string // "" when valid
	}{
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

// TestRegistry_DeliverySchema: a subscription's delivery schema is its
// topic's unless the broker converts, from EventGridSchema to
// CloudEventSchemaV1_0 only.
func TestRegistry_DeliverySchema(t *testing.T) {
	tests := []struct {
		name            string
		topic, delivery eventgrid.InputSchema
		inText          string // "" when valid
	}{
		{"Unset", eventgrid.CloudEventSchemaV1_0, "", ""},
		{"ConvertEventGridToCloudEvents", eventgrid.EventGridSchema, eventgrid.CloudEventSchemaV1_0, ""},
		{"NoConversionFromCloudEvents", eventgrid.CloudEventSchemaV1_0, eventgrid.EventGridSchema, "only conversion the broker makes is from EventGridSchema to CloudEventSchemaV1_0"},
		{"NoConversionToCustom", eventgrid.EventGridSchema, eventgrid.CustomEventSchema, "EventGridSchema to CloudEventSchemaV1_0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := MustNew(t, nil)
			MustPutTopic(t, r, "t", tt.topic)
			sub := hook("t", "s")
			sub.EventDeliverySchema = tt.delivery
			stored, _, err := r.PutSubscription(t.Context(), sub)
			if tt.inText == "" {
				if err != nil {
					t.Fatalf("PutSubscription: %v", err)
				}
				if want := cmp.Or(tt.delivery, tt.topic); stored.EventDeliverySchema != want {
					t.Errorf("delivery schema = %s, want %s", stored.EventDeliverySchema, want)
				}
				return
			}
			mustCode(t, err, eventgrid.EInvalidSchema)
			if msg := eventgrid.ErrorMessage(err); !strings.Contains(msg, tt.inText) {
				t.Errorf("message %q does not contain %q", msg, tt.inText)
			}
		})
	}
}
