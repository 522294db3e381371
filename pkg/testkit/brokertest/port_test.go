package brokertest

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePort: the port is below the system's ephemeral range, where
// listeners on port 0 never land, and one can listen on it.
func TestFreePort(t *testing.T) {
	lo, hi := explicitPorts()
	if lo != 10000 || hi <= lo {
		t.Fatalf("explicit ports [%d, %d)", lo, hi)
	}
	for range 20 {
		port := FreePort(t)
		if port < lo || port >= hi {
			t.Fatalf("FreePort = %d, not in [%d, %d)", port, lo, hi)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("listening on the port FreePort gave: %v", err)
		}
		ln.Close()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if p := ln.Addr().(*net.TCPAddr).Port; p >= lo && p < hi {
		t.Errorf("the system gave port %d to a listener on port 0, inside [%d, %d)", p, lo, hi)
	}
	if addr := FreeAddr(t); net.ParseIP(addr[:len("127.0.0.1")]) == nil {
		t.Errorf("FreeAddr = %q", addr)
	}
}
