// Package doctest runs the hands-on blocks of Markdown pages the way a
// reader pastes them, so that a change that breaks a page fails a test.
//
// Load reads a page into its fenced blocks, each with the heading it sits
// under. A test claims the blocks of a section (Page.Claim) and runs them:
// shell blocks pasted into one bash (StartShell, Shell.Run), Go programs
// written out, compiled and run. Page.Check then fails the test for every
// runnable block (sh, bash, go) that no test claimed, so that a new block
// cannot go untested by accident. A block meant to be shown but not run
// says so on the line before its fence, where a reader of the source sees
// it too, with the reason:
//
//	<!-- not run: needs an Azure IoT hub -->
//	```sh
//	az iot hub module-twin update …
//	```
//
// Such blocks are never claimed. Keep them rare: a page whose examples need
// a counterpart the tests can run (an MQTT broker, a local HTTPS server)
// runs them against it.
//
// StartGroup starts any program in a process group of its own, so that what
// it starts in the background (a broker, a subscriber) stops with it when
// the test ends.
package doctest
