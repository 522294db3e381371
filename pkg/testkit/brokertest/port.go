package brokertest

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreePort returns a loopback TCP port nothing listens on now, for a
// process the test starts later (an MQTT broker, the storage emulator, a
// broker a page's shell starts), or one it stops and starts again on the
// same port.
//
// The system gives listeners on port 0, and outgoing connections, ports
// from its ephemeral range (net.ipv4.ip_local_port_range): a port found
// free there could be taken between its choice and its use by any of them,
// this test's or another's running at the same time. FreePort picks one at
// random below that range, from 10000 up, where only another explicit
// choice can take it.
func FreePort(tb testing.TB) int {
	tb.Helper()
	lo, hi := explicitPorts()
	var err error
	for range 100 {
		port := lo + rand.IntN(hi-lo)
		var ln net.Listener
		if ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			ln.Close()
			return port
		}
	}
	tb.Fatalf("brokertest: no free port from %d to %d: %v", lo, hi-1, err)
	return 0
}

// FreeAddr returns 127.0.0.1:port with a port from FreePort.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(tb)))
}

// explicitPorts returns the ports FreePort picks from, [lo, hi): from
// 10000 to the start of the system's ephemeral range (Linux's default
// range starts at 32768, which is also the fallback).
func explicitPorts() (lo, hi int) {
	lo, hi = 10000, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > lo+1000 {
				hi = n
			}
		}
	}
	return lo, hi
}
