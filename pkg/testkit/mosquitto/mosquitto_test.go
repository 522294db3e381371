package mosquitto_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/testkit/mosquitto"
	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
)

func TestStartRestart(t *testing.T) {
	ca := testpki.NewCA(t, "mqtt ca")
	b := mosquitto.Start(t, mosquitto.Options{CA: ca, Users: map[string]string{"hub/dev/mod/?api-version=2018-06-30": "SharedAccessSignature sr=a%2Fb&sig=x&se=1"}})
	if !strings.HasPrefix(b.URL(), "mqtts://127.0.0.1:") {
		t.Fatalf("URL = %s", b.URL())
	}
	handshake := func() error {
		c, err := tls.Dial("tcp", b.Addr(), b.TLSConfig(ca))
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := handshake(); err != nil {
		t.Fatalf("TLS to the broker: %v", err)
	}
	b.Restart()
	if err := handshake(); err != nil {
		t.Fatalf("TLS after restart: %v", err)
	}
	b.Stop()
	if handshake() == nil {
		t.Fatal("stopped broker still answers")
	}
}
