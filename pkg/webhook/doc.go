// Package webhook sends delivery batches over HTTP(S): to WebHook
// destinations, and to cloud Event Grid topics for EventGrid destinations.
// Sender implements delivery.Sender: a batch goes as one JSON array, or one
// request per event in the Structured and Binary content modes
// (docs/design.md#content-modes), with the custom delivery properties as
// headers and, when the destination has signing secrets, Standard Webhooks
// signatures (docs/design.md#signatures). A failed request is an *Error
// carrying the status and Retry-After the endpoint answered.
//
// Handshake makes the validation handshakes a WebHook asks for when its
// subscription is put (docs/design.md#validation-handshakes) and returns
// the step that makes what the endpoint agreed (its allowed rate) take
// effect once the subscription is stored; Sender, as a
// eventgrid.SubscriptionObserver, forgets that rate with the subscription.
package webhook
