// Package eventgrid defines the broker's domain: topics, event subscriptions,
// events, dead letters, the errors the API reports and the interfaces that
// connect the management plane, the publish path and the delivery modes.
//
// Every other package of edgegrid depends on it; it depends on none of them
// but pkg/rawjson, the JSON reader it extracts delivery attributes with
// (attributes.go), which itself imports only the standard library.
package eventgrid
