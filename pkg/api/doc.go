// Package api serves the broker's HTTP API with echo: the management plane
// (topics and event subscriptions), the publish routes, the namespace data
// plane (receive and settle the events of queue subscriptions, answers
// streamed from the queue) and the health probe.
// Handlers decode and validate requests, call the registry and the
// publisher, and return errors; one error handler turns every error into the
// Event Grid error envelope with its HTTP status.
package api
