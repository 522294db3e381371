package brokertest_test

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// TestFreePort: the port is below the system's ephemeral range, where
// listeners on port 0 never land, and one can listen on it.
func TestFreePort(t *testing.T) {
	ephemeral := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		ephemeral, _ = strconv.Atoi(strings.Fields(string(b))[0])
	}
	for range 20 {
		port := brokertest.FreePort(t)
		if port < 10000 || port >= ephemeral {
			t.Fatalf("FreePort = %d, not in [10000, %d)", port, ephemeral)
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
	if p := ln.Addr().(*net.TCPAddr).Port; p < ephemeral {
		t.Errorf("the system gave port %d to a listener on port 0, below %d", p, ephemeral)
	}
	host, port, err := net.SplitHostPort(brokertest.FreeAddr(t))
	if n, _ := strconv.Atoi(port); err != nil || host != "127.0.0.1" || n < 10000 {
		t.Errorf("FreeAddr = %s:%s (%v)", host, port, err)
	}
}
