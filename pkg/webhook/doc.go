// Package webhook sends delivery batches over HTTP(S): to WebHook
// destinations, and to cloud Event Grid topics for EventGrid destinations.
// Sender implements push.Sender: a batch goes as one JSON array, or one
// request per event in the Structured and Binary content modes
// (docs/design.md#content-modes), with the custom delivery properties as
// headers and, when the destination has signing secrets, Standard Webhooks
// signatures (docs/design.md#signatures). A failed request is an *Error
// carrying the status and Retry-After the endpoint answered.
//
// Requests to http and https URLs that no proxy serves, with an ASCII host
// and no user information, go over the connections of an h1.Client: the
// worker that sends one writes it and reads its answer, and connections
// are shared by every subscription of an address (docs/design.md#delivery-connections).
// The others, through a proxy from the environment (HTTP_PROXY,
// HTTPS_PROXY, NO_PROXY) among them, go through net/http's Transport as
// NewHTTPClient configures it, and so do the validation handshakes. Close
// closes both kinds of connection: the broker closes the Sender after the
// delivery modes that use it.
//
// Handshake makes the validation handshakes a WebHook asks for when its
// subscription is put (docs/design.md#validation-handshakes) and returns
// the step that makes what the endpoint agreed (its allowed rate) take
// effect once the subscription is stored; Sender, as a
// eventgrid.SubscriptionObserver, forgets that rate with the subscription.
package webhook
