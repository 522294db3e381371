// Package registry holds the broker's topics and event subscriptions in
// memory. It validates every change, compiles each subscription's filter
// once, tells its observer (the dispatcher of the delivery modes) about
// subscription changes, and routes published events: its Router matches
// them against a lock-free snapshot of each topic's subscriptions and hands
// the matches on.
package registry
