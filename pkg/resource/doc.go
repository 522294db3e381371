// Package resource reads and writes the JSON shapes of topics and event
// subscriptions: the management API's request and response bodies and the
// module-twin shape used for declarative configuration.
//
// Reading is liberal, as the original module's clients demand: property
// names match case-insensitively (the C# SDK sends PascalCase), documented
// aliases are accepted (topic/topicName, eventExpiryInMinutes/
// eventTimeToLiveInMinutes, the legacy deliveryPolicy, CustomSchema), arrays
// may arrive as JSON-encoded strings (module-twin limits), and booleans and
// integers may arrive as strings. Writing is strict: camelCase names and
// canonical values only. Errors name the offending field.
package resource
