// Package servicebustest stands in for an Event Hubs or Service Bus
// namespace in tests. No emulator of either service runs here, so Namespace
// implements their REST send APIs as documented: it checks the SAS token
// (signature, expiry, audience, key name), the api-version, the content
// types and the batch format, and keeps every message it accepts with its
// properties.
package servicebustest
