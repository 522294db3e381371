package registry

import (
	"encoding/base64"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/schema"
)

// MaxSigningSecrets bounds the signing secrets of one destination: one
// signature per secret goes with every delivery, and rotation needs two.
const MaxSigningSecrets = 4

// checkDeliverySchema allows a subscription's delivery schema to differ from
// its topic's input schema only where the broker converts (EventGridSchema
// to CloudEventSchemaV1_0).
func checkDeliverySchema(delivery, topic eventgrid.InputSchema) error {
	if delivery == topic || schema.Converts(topic, delivery) {
		return nil
	}
	return eventgrid.Errorf(eventgrid.EInvalidSchema, "properties.eventDeliverySchema %s must equal the topic's inputSchema %s; the only conversion the broker makes is from EventGridSchema to CloudEventSchemaV1_0.", delivery, topic)
}

// validateWebhookInterop checks the webhook interop properties of a
// subscription's destination (docs/design.md#webhook-interop): the content
// mode, the validation
// handshake and the signing secrets. Messages name the field and never
// contain a secret.
func validateWebhookInterop(sub *eventgrid.EventSubscription) error {
	const field = "properties.destination.properties."
	d := &sub.Destination
	if d.EndpointType != eventgrid.WebHook {
		switch {
		case d.ContentMode != "" && d.ContentMode != eventgrid.ContentBatch:
			return eventgrid.Errorf(eventgrid.EInvalidDestination, field+"contentMode %s applies to WebHook destinations only; an %s destination receives a JSON array.", d.ContentMode, d.EndpointType)
		case d.Validation != "" && d.Validation != eventgrid.ValidationNone:
			return eventgrid.Errorf(eventgrid.EInvalidDestination, field+"validation %s applies to WebHook destinations only.", d.Validation)
		case len(d.SigningSecrets) > 0:
			return eventgrid.Errorf(eventgrid.EInvalidDestination, field+"signingSecret applies to WebHook destinations only.")
		}
		return nil
	}
	switch d.ContentMode {
	case "", eventgrid.ContentBatch:
	case eventgrid.ContentStructured, eventgrid.ContentBinary:
		if d.MaxEventsPerBatch > 0 {
			return eventgrid.Errorf(eventgrid.EInvalidDelivery, field+"maxEventsPerBatch cannot be set with contentMode %s, which sends one event per request.", d.ContentMode)
		}
		if d.PreferredBatchSizeInKilobytes > 0 {
			return eventgrid.Errorf(eventgrid.EInvalidDelivery, field+"preferredBatchSizeInKilobytes cannot be set with contentMode %s, which sends one event per request.", d.ContentMode)
		}
		if d.ContentMode == eventgrid.ContentBinary && sub.EventDeliverySchema != eventgrid.CloudEventSchemaV1_0 {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, field+"contentMode Binary needs eventDeliverySchema CloudEventSchemaV1_0, not %s; use Structured for one %s event per request.", sub.EventDeliverySchema, sub.EventDeliverySchema)
		}
	default:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, field+"contentMode %q is not valid; accepted values are Batch, Structured and Binary.", d.ContentMode)
	}
	switch d.Validation {
	case "", eventgrid.ValidationNone, eventgrid.ValidationEventGrid, eventgrid.ValidationCloudEvents:
	default:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, field+"validation %q is not valid; accepted values are None, EventGrid and CloudEvents.", d.Validation)
	}
	if len(d.SigningSecrets) > MaxSigningSecrets {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, field+"signingSecret holds %d secrets; at most %d are allowed.", len(d.SigningSecrets), MaxSigningSecrets)
	}
	for i, s := range d.SigningSecrets {
		if !validSigningSecret(s) {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, field+"signingSecret (secret %d of %d) must be whsec_ followed by the base64 of 24 to 64 random bytes.", i+1, len(d.SigningSecrets))
		}
	}
	return nil
}

// validSigningSecret reports whether s is a Standard Webhooks secret:
// "whsec_" and the standard base64 encoding of 24 to 64 bytes.
func validSigningSecret(s string) bool {
	key, ok := strings.CutPrefix(s, "whsec_")
	if !ok {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(key)
	return err == nil && len(b) >= 24 && len(b) <= 64
}
