// Package sendertest holds the contract every push.Sender keeps, as one
// conformance suite in the style of watermill's tests.TestPubSub: a
// sender's package calls TestSender with the Features of its protocol and
// a Constructor that sets up a real counterpart (a loopback HTTP server, a
// Service Bus namespace stand-in, Azurite, mosquitto) for each test, and
// the suite checks what the delivery engine relies on: status errors
// classified alike by every sender, Retry-After honoured where the protocol
// has it, a prompt return when the context ends (and nothing sent when it
// had ended already), no hold on the batch once Send returns, and safety
// for concurrent use.
//
// Faults (an http.Handler wrapper) and Stall (a TCP proxy) give HTTP and
// MQTT counterparts the failures the suite asks for. It is for tests only;
// its helpers fail the test instead of returning errors.
package sendertest
