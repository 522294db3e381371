// Package registry holds the broker's topics and event subscriptions in
// memory. It validates every change, compiles each subscription's filter
// once, tells the delivery engine about subscription changes, and gives the
// publish path a lock-free snapshot of each topic's routes.
package registry
