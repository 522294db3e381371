package eventgrid

import "strings"

// InputSchema is the schema of the events a topic accepts, and the schema in
// which its subscriptions receive them (the broker never converts).
type InputSchema string

// The three schemas Event Grid on IoT Edge supports.
const (
	EventGridSchema      InputSchema = "EventGridSchema"
	CustomEventSchema    InputSchema = "CustomEventSchema"
	CloudEventSchemaV1_0 InputSchema = "CloudEventSchemaV1_0"
)

// ParseInputSchema parses a schema name case-insensitively. "CustomSchema" is
// accepted as an alias of CustomEventSchema, as the original documentation
// used both. ok is false for any other name.
func ParseInputSchema(s string) (schema InputSchema, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "eventgridschema":
		return EventGridSchema, true
	case "customeventschema", "customschema":
		return CustomEventSchema, true
	case "cloudeventschemav1_0":
		return CloudEventSchemaV1_0, true
	}
	return "", false
}

// SchemaNames lists the canonical schema names, for error messages.
const SchemaNames = "EventGridSchema, CustomEventSchema, CloudEventSchemaV1_0"
