package brokertest

import (
	"os"
	"os/exec"
	"testing"
)

// RequireCommand returns the path of the program name, which a test needs as
// a real counterpart (an MQTT broker, the storage emulator). When it is
// missing the test cannot run: under CI (CI=true) that fails the test, since
// CI installs every counterpart; elsewhere the test is skipped, loudly. The
// message names install, the way to get the program (for example
// "bash scripts/ci-deps/mosquitto.sh").
func RequireCommand(tb testing.TB, name, install string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := name + " is not installed; this test runs against the real one. Install it with: " + install
	if os.Getenv("CI") != "" {
		tb.Fatal(msg)
	}
	tb.Skip("SKIPPED: " + msg)
	return ""
}
