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
// work or what the client did not mean: a number must be a JSON number, not
// a string holding one; a custom header value must be one HTTP can carry;
// and a member the API does not know is refused, naming the nearest known
// one, rather than ignored (members GET returns are accepted and ignored;
// see docs/api.md#members). A destination's members are read, not judged:
// whether what they hold can be delivered to is the rule of the
// destination's type, which the registry applies
// (docs/design.md#adding-a-destination).
//
// Writing is strict: camelCase names and canonical values only, and no
// secret (docs/api.md#secrets): a destination shows what it targets, its URL
// without the query, the entity or account its connection string names. A
// body may leave those secrets out for DecodeSubscriptionUpdate to keep the
// stored ones. Errors name the offending field and never hold a secret.
package resource
