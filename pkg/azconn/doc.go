// Package azconn reads Azure connection strings: the storage account kind
// (AccountName, AccountKey, BlobEndpoint, QueueEndpoint,
// DefaultEndpointsProtocol, EndpointSuffix) with ParseStorage, and the
// entity-scoped Service Bus / Event Hubs kind (Endpoint,
// SharedAccessKeyName, SharedAccessKey, EntityPath) with ParseEntity; and
// it checks the names of blob containers and queues (StorageNameProblem).
// It imports only the standard library, so that validation at PUT needs no
// SDK and no sender. Connection strings are secrets: nothing here puts one,
// or a key, into an error text.
package azconn
