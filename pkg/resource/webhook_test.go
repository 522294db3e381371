package resource_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func hookWith(props string) string {
	return `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x",` + props + `}}}}`
}

func TestDecodeSubscription_WebhookInterop(t *testing.T) {
	tests := []struct {
		name  string
		props string
		want  eventgrid.Destination
	}{
		{"Defaults", `"maxEventsPerBatch":1`, eventgrid.Destination{MaxEventsPerBatch: 1}},
		{"Structured", `"contentMode":"structured"`, eventgrid.Destination{ContentMode: eventgrid.ContentStructured}},
		{"Binary", `"contentMode":" Binary "`, eventgrid.Destination{ContentMode: eventgrid.ContentBinary}},
		{"Batch", `"contentMode":"BATCH"`, eventgrid.Destination{ContentMode: eventgrid.ContentBatch}},
		{"NullContentMode", `"contentMode":null`, eventgrid.Destination{}},
		{"ValidationEventGrid", `"validation":"eventgrid"`, eventgrid.Destination{Validation: eventgrid.ValidationEventGrid}},
		{"ValidationCloudEvents", `"validation":"CloudEvents"`, eventgrid.Destination{Validation: eventgrid.ValidationCloudEvents}},
		{"ValidationNone", `"validation":"None"`, eventgrid.Destination{Validation: eventgrid.ValidationNone}},
		{"OneSecret", `"signingSecret":"` + testSecret + `"`, eventgrid.Destination{SigningSecrets: []string{testSecret}}},
		{"Rotation", `"signingSecret":" ` + testSecret + `  whsec_b2xk "`, eventgrid.Destination{SigningSecrets: []string{testSecret, "whsec_b2xk"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := resource.DecodeSubscription([]byte(hookWith(tt.props)), "t", "s")
			if err != nil {
				t.Fatalf("DecodeSubscription: %v", err)
			}
			tt.want.EndpointType, tt.want.EndpointURL = eventgrid.WebHook, "https://h/x"
			if !reflect.DeepEqual(sub.Destination, tt.want) {
				t.Errorf("Destination = %+v, want %+v", sub.Destination, tt.want)
			}
		})
	}
}

func TestDecodeSubscription_WebhookInteropErrors(t *testing.T) {
	const field = "properties.destination.properties."
	tests := []struct {
		name, props string
		parts       []string
	}{
		{"UnknownContentMode", `"contentMode":"Streaming"`, []string{field + "contentMode", "Streaming", "Batch, Structured and Binary"}},
		{"ContentModeNotString", `"contentMode":1`, []string{field + "contentMode"}},
		{"UnknownValidation", `"validation":"Manual"`, []string{field + "validation", "None, EventGrid and CloudEvents"}},
		{"ValidationNotString", `"validation":true`, []string{field + "validation"}},
		{"SecretNotString", `"signingSecret":["` + testSecret + `"]`, []string{field + "signingSecret"}},
		{"SecretBlank", `"signingSecret":"  "`, []string{field + "signingSecret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resource.DecodeSubscription([]byte(hookWith(tt.props)), "t", "s")
			mustCode(t, err, eventgrid.EInvalidDestination, tt.parts...)
		})
	}
}

func TestNewSubscription_WebhookInterop(t *testing.T) {
	sub := &eventgrid.EventSubscription{
		Topic: "t", Name: "s", EventDeliverySchema: eventgrid.CloudEventSchemaV1_0,
		Destination: eventgrid.Destination{
			EndpointType: eventgrid.WebHook, EndpointURL: "https://h/x",
			ContentMode: eventgrid.ContentBinary, Validation: eventgrid.ValidationCloudEvents,
			SigningSecrets: []string{testSecret},
		},
	}
	got := MustMarshal(t, resource.NewSubscription(sub, prefix))
	if !strings.Contains(got, `"properties":{"endpointUrl":"https://h/x","contentMode":"Binary","validation":"CloudEvents"}`) {
		t.Errorf("destination properties not encoded: %s", got)
	}
	if strings.Contains(got, "whsec_") || strings.Contains(strings.ToLower(got), "signingsecret") {
		t.Errorf("the signing secret is returned: %s", got)
	}
}
