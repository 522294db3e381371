// Package eventgrid defines the broker's domain: topics, event subscriptions,
// events, the errors the API reports and the interfaces that connect the
// management plane, the publish path and the delivery engine.
//
// It imports only the standard library. Every other package of edgegrid
// depends on it; it depends on none of them.
package eventgrid
