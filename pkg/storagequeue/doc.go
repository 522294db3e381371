// Package storagequeue delivers events to Azure Storage queues (the edge
// module's StorageQueue destination, docs/design.md#storagequeue-destination):
// one message per event, the
// event's JSON object base64-encoded as Azure Functions' queue triggers
// expect, through the Azure SDK for Go's queue client.
package storagequeue
