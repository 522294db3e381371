// Package testkit groups the packages only tests import: brokertest
// (eventually, HTTP helpers), fakeclock (a clock tests move by hand), logbuf
// (a log buffer safe for concurrent writes) and testpki (certificates and
// the workload API stand-in). They sit here rather than under pkg/internal
// because the black-box tests in tests/ use them too, and Go lets only code
// under pkg/ import pkg/internal. Nothing in module/ or the library packages
// may import them.
package testkit
