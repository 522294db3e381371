// Package webhooktest holds the receiving side of webhook interop tests: a
// Standard Webhooks signature verifier written from the specification
// (independently of the broker's signing code), and the CloudEvents Go
// SDK's receiver on a loopback port.
//
// It is for tests only.
package webhooktest
