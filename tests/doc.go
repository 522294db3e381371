// Package tests holds black-box tests of edgegrid: they build the real
// broker binary, start it as a process with an environment like the one IoT
// Edge gives it, and talk to it over loopback HTTP(S) like its users do.
// TestReadmeWalkthrough and TestDocs go further and paste the hands-on
// blocks of README.md and docs/ into a shell, as a reader does.
//
// The tests run one at a time: many measure rates, or wait for what
// another broker's load would slow. The few that spend tens of seconds
// waiting for a lock to expire or a receive to end empty, with little CPU,
// call t.Parallel, so that they wait together, after the rest.
package tests
