// Package mock provides test doubles for the interfaces of package
// eventgrid, and for the publish path the API calls: function-field fakes
// (Publisher, EventPublisher) whose behaviour a test sets
// field by field, and recorders (Recorder, SubscriptionObserver) that keep
// every call for a test to inspect afterwards.
//
// Every type is safe for concurrent use, so that a recorder can sit behind a
// real HTTP server while a test reads it. Sender, the fake of
// push.Sender, does both: a function field answers, and every call is
// recorded. The package imports the standard library and packages
// eventgrid, delivery (for Sender) and rawjson.
package mock
