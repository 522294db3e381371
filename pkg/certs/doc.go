// Package certs provides the broker's TLS material and configurations: the
// HTTPS listener's server certificate, the outbound identity (client)
// certificate, the trust bundle, and the tls.Config values built from them.
//
// Sources come in three kinds. IoT Edge sources fetch from the workload API
// (package workload) and renew before expiry; file sources read PEM files and
// reload them when they change; static sources hold one certificate (a
// self-signed one made at start when the broker runs outside IoT Edge).
//
// Renewing and reloading sources have an owner: it calls Run(ctx) in a
// goroutine and Close on shutdown, which stops Run and waits for it. Until
// Run is called a source keeps serving what it loaded at construction. All
// Get* methods are safe for concurrent use and never block on I/O.
//
// Private keys are never logged.
package certs
