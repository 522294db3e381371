// Package mock provides test doubles for the interfaces of package
// eventgrid, and for the publish path the API calls: function-field fakes
// (Publisher, EventPublisher) whose behaviour a test sets
// field by field, and recorders (Recorder, SubscriptionObserver) that keep
// every call for a test to inspect afterwards.
//
// Every type is safe for concurrent use, so that a recorder can sit behind a
// real HTTP server while a test reads it. The package imports only the
// standard library and package eventgrid.
package mock
