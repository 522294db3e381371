// Package testkit groups the packages only tests import: brokertest
// (eventually, HTTP helpers), fakeclock (a clock tests move by hand),
// logbuf (a log buffer safe for concurrent writes), testpki (certificates
// and the workload API stand-in), sendertest (the contract every
// push.Sender keeps, as one conformance suite), webhooktest (the
// receiving side of webhook interop), doctest (the hands-on blocks of the
// Markdown pages, run as a reader pastes them), and the real counterparts
// tests start: azurite (Azure Storage), mosquitto (MQTT) and browser
// (headless Chromium). They sit here rather than under pkg/internal because
// the black-box tests in tests/ use them too, and Go lets only code under
// pkg/ import pkg/internal. Nothing in module/ or the library packages may
// import them.
package testkit
