// Package resource reads and writes the JSON shapes of topics and event
// subscriptions: the management API's request and response bodies and the
// module-twin shape used for declarative configuration.
//
// Reading is liberal, as the original module's clients demand: property
// names match case-insensitively (the C# SDK sends PascalCase), documented
// aliases are accepted (topic/topicName, eventExpiryInMinutes/
// eventTimeToLiveInMinutes, the legacy deliveryPolicy, CustomSchema), arrays
// may arrive as JSON-encoded strings (module-twin limits), and booleans may
// arrive as strings. It is strict where leniency would store what cannot
// work: a number must be a JSON number, not a string holding one, and a
// custom header value must be one HTTP can carry. Writing is strict:
// camelCase names and canonical values only. Errors name the offending
// field.
package resource
