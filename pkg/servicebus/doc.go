// Package servicebus delivers events to Azure Event Hubs, Service Bus queues
// and Service Bus topics through the services' REST send APIs: one HTTPS
// POST to https://<namespace>/<entity>/messages per event, or one batched
// POST (application/vnd.microsoft.servicebus.json) per batch when the
// subscription batches, authorised by a SAS token made from the entity's
// connection string. There is no AMQP stack: the broker stays small and needs
// only port 443 outbound.
//
// The connection string is a secret: it never appears in an error text, and
// callers must not log it.
package servicebus
