package mosquitto

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

// Install is how to get mosquitto when it is missing.
const Install = "bash scripts/ci-deps/mosquitto.sh"

// Options configure a Broker.
type Options struct {
	// CA issues the broker's server certificate (for 127.0.0.1 and
	// localhost); nil serves plain MQTT.
	CA *testpki.CA
	// Users, when not empty, are the only user names and passwords
	// accepted; anonymous clients are refused. Empty lets anyone in.
	Users map[string]string
	// Persistence keeps sessions and queued messages across Restart, so a
	// subscriber with a persistent session misses nothing.
	Persistence bool
}

// Broker is a running mosquitto. Its methods are safe for concurrent use.
type Broker struct {
	tb      testing.TB
	bin     string
	dir     string
	conf    string
	logPath string
	// Port is the broker's TCP port on 127.0.0.1; it stays the same across
	// Restart.
	Port int
	tls  bool

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts mosquitto, or skips the test (fails it under CI) when
// mosquitto is not installed. It returns once the broker accepts TCP
// connections.
func Start(tb testing.TB, o Options) *Broker {
	tb.Helper()
	bin := brokertest.RequireCommand(tb, "mosquitto", Install)
	b := &Broker{tb: tb, bin: bin, dir: tb.TempDir(), tls: o.CA != nil}
	b.logPath = filepath.Join(b.dir, "mosquitto.log")
	b.conf = filepath.Join(b.dir, "mosquitto.conf")
	var extra strings.Builder
	if b.tls {
		cert := o.CA.Issue(tb, "127.0.0.1", []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}, time.Now().Add(24*time.Hour))
		writeFile(tb, filepath.Join(b.dir, "ca.pem"), o.CA.PEM())
		writeFile(tb, filepath.Join(b.dir, "server.pem"), testpki.CertPEM(cert))
		writeFile(tb, filepath.Join(b.dir, "server.key"), testpki.KeyPEM(tb, cert))
		fmt.Fprintf(&extra, "cafile %s\ncertfile %s\nkeyfile %s\ntls_version tlsv1.2\n",
			filepath.Join(b.dir, "ca.pem"), filepath.Join(b.dir, "server.pem"), filepath.Join(b.dir, "server.key"))
	}
	persistence := "persistence false\n"
	if o.Persistence {
		persistence = "persistence true\npersistence_location " + b.dir + "/\n"
	}
	if len(o.Users) > 0 {
		pw := filepath.Join(b.dir, "passwd")
		writeFile(tb, pw, nil)
		passwd := brokertest.RequireCommand(tb, "mosquitto_passwd", Install)
		for user, pass := range o.Users {
			out, err := exec.Command(passwd, "-b", pw, user, pass).CombinedOutput()
			if err != nil {
				tb.Fatalf("mosquitto_passwd: %v: %s", err, out)
			}
		}
		fmt.Fprintf(&extra, "allow_anonymous false\npassword_file %s\n", pw)
	} else {
		extra.WriteString("allow_anonymous true\n")
	}
	for attempt := 0; ; attempt++ {
		b.Port = brokertest.FreePort(tb)
		conf := fmt.Sprintf("per_listener_settings false\n%suser root\nlog_dest file %s\nlog_type all\nconnection_messages true\nlistener %d 127.0.0.1\n%s",
			persistence, b.logPath, b.Port, extra.String())
		writeFile(tb, b.conf, []byte(conf))
		if err := b.start(); err == nil {
			break
		} else if attempt == 2 {
			tb.Fatalf("mosquitto did not start: %v\n%s", err, b.Log())
		}
	}
	tb.Cleanup(b.Stop)
	return b
}

// URL returns the broker's address as an MQTT URL: mqtts://127.0.0.1:<port>
// with TLS, mqtt://127.0.0.1:<port> without.
func (b *Broker) URL() string {
	scheme := "mqtt"
	if b.tls {
		scheme = "mqtts"
	}
	return scheme + "://" + b.Addr()
}

// Addr returns 127.0.0.1:<port>.
func (b *Broker) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(b.Port)) }

// TLSConfig returns a client configuration that trusts the broker's CA, or
// nil without TLS.
func (b *Broker) TLSConfig(ca *testpki.CA) *tls.Config {
	if !b.tls {
		return nil
	}
	return &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}
}

// Log returns what the broker has logged so far.
func (b *Broker) Log() string {
	data, _ := os.ReadFile(b.logPath)
	return string(data)
}

// start runs mosquitto and waits until it accepts connections, or until it
// exits.
func (b *Broker) start() error {
	cmd := exec.Command(b.bin, "-c", b.conf)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			return fmt.Errorf("mosquitto exited: %s", stderr.String())
		default:
		}
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err == nil {
			c.Close()
			b.mu.Lock()
			b.cmd, b.done = cmd, done
			b.mu.Unlock()
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("mosquitto not listening on %s after 10s", b.Addr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the broker by its pid (SIGTERM, then SIGKILL after five
// seconds) and waits for it to exit. Stopping a stopped broker does nothing.
func (b *Broker) Stop() {
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.cmd, b.done = nil, nil
	b.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Restart starts a stopped broker again on the same port, with the same
// configuration. It fails the test when the broker does not come back.
func (b *Broker) Restart() {
	b.tb.Helper()
	b.Stop()
	var err error
	for range 50 { // the port may linger briefly after the old process
		if err = b.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.tb.Fatalf("mosquitto did not restart: %v\n%s", err, b.Log())
}

func writeFile(tb testing.TB, path string, data []byte) {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatalf("mosquitto: %v", err)
	}
}
