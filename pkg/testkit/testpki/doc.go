// Package testpki is test support for the packages that handle certificates:
// a certificate authority built with crypto/x509, self-signed certificates,
// a TLS test server, and WorkloadServer, a stand-in for the IoT Edge
// security daemon's workload API served over a real unix socket.
//
// It is for tests only; it fails the test (tb.Fatal) instead of returning
// errors.
package testpki
