// Package tests holds black-box tests of edgegrid: they build the real
// broker binary, start it as a process with an environment like the one IoT
// Edge gives it, and talk to it over loopback HTTP(S) like its users do.
// TestReadmeWalkthrough and TestDocs go further and paste the hands-on
// blocks of README.md and docs/ into a shell, as a reader does.
//
// # Parallel and serial tests
//
// Most tests mostly wait: for a lock to expire, a receive to end empty, a
// retry, a browser, a counterpart to start. Each has its own broker,
// counterparts (mosquitto, Azurite, Chromium) and folders on ports it gets
// from the system, so they call t.Parallel and wait together. The package
// runs 8 of them per CPU at once, at most 32 (-parallel 16 on 2 cores:
// TestMain sets it unless go test's -parallel is given; go test -parallel 2
// ./tests/ runs them as go test does by default).
//
// A test stays serial (no t.Parallel, and a comment "Serial (see doc.go):"
// saying why) when it
//
//   - measures a rate, a latency, CPU time or memory;
//   - asserts a time that the load of other brokers could break: an upper
//     bound with little slack (an answer within 2 s, a retry within 20 %
//     of its schedule), or steps that must fit a short scaled lock or time
//     to live; a lower bound measured from a moment the test itself picks,
//     late under load, is one too.
//
// Go runs the serial tests first, one at a time, with nothing else of this
// package running; then the parallel ones. A parallel test's own timing
// assertions leave seconds of slack, and its scaled times are long enough
// for its steps under load.
//
// Shared things need care. A port that something listens on only later (a
// counterpart started, or restarted on its port; a page's broker) comes
// from brokertest.FreePort, below the system's ephemeral range, where no
// listener on port 0 of another test lands meanwhile. Tests that share a
// file of the repository (the README's and the pages' shells build into
// bin/) hold a lock for it (repoBin) rather than run at the same time. No
// test changes the process's environment or working folder.
package tests
