// Package api serves the broker's HTTP API with echo: the management plane
// (topics and event subscriptions), the publish routes, the namespace data
// plane (receive and settle the events of queue subscriptions, answers
// streamed from the queue) and the health probe.
//
// Handlers decode and validate requests and call the small interfaces this
// package declares (services.go): Resources (the registry), Publisher (the
// registry's router in front of the dispatcher: the API decodes events,
// and matching them to subscriptions is the publisher's business), Status,
// Admitter and Queues. So the handlers can be tested against fakes. One
// error handler turns every error into the Event Grid error envelope with
// its HTTP status.
package api
