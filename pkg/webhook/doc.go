// Package webhook sends delivery batches over HTTP(S): to WebHook
// destinations, and to cloud Event Grid topics for EventGrid destinations. It
// implements delivery.Sender.
package webhook
