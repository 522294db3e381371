// Package brokertest holds helpers shared by the broker's tests: waiting for
// asynchronous conditions, making HTTP requests and reading the API's JSON
// and error envelopes without error plumbing, and choosing ports for
// processes that listen later.
//
// It is for tests only; its helpers fail the test (tb.Fatal) instead of
// returning errors, and call tb.Helper so that failures point at the caller.
package brokertest
