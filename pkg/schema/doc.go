// Package schema decodes, validates and canonicalises the events a client
// publishes, once, on the publish path.
//
// A request body is checked with rawjson.ValidStrict and then walked in
// place with package rawjson; no Go values are built. The check refuses,
// besides invalid JSON, what readers would read differently (I-JSON,
// RFC 7493): invalid UTF-8, unpaired surrogate escapes, and an object
// naming a member twice, names compared ignoring case, anywhere in an event,
// data included. A filter reads the same member a receiver does. The result is one
// *eventgrid.Event per published event whose Body is the JSON object
// delivered to subscribers:
//
//   - EventGridSchema: a canonical envelope with camelCase names in a fixed
//     order, "topic" set to the topic name and "metadataVersion" "1". Input
//     property names are matched case-insensitively and unknown properties
//     are dropped; id and eventType must not be empty, eventTime must be an
//     RFC 3339 timestamp.
//   - CustomEventSchema: the element exactly as received (copied: no event
//     keeps memory of the request body, which the caller may reuse).
//   - CloudEventSchemaV1_0: a canonical CloudEvents 1.0 JSON object with
//     lower-case attribute names in a fixed order, from a structured-mode JSON
//     body or from an HTTP binary-mode request (ce-* headers). Every
//     attribute rule of the CloudEvents 1.0 specification and its JSON
//     format is checked (docs/api.md#cloudevents-attributes). The names of
//     the format's own members are matched case-insensitively, as for
//     EventGridSchema; extension names are case-sensitive and must be lower
//     case.
//
// Validation is all or nothing: the first bad event makes a decoder return an
// *eventgrid.Error naming the event's index and the field, and no events.
// Every function in the package is safe for concurrent use; none of them
// modifies its inputs.
package schema
