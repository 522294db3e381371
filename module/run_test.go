package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/config"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// TestRun_StopClosesWebhookConnections: the connection a delivery left
// idle is closed when the broker stops, not left to the endpoint or to
// the process's exit; the sender is closed through the broker's list of
// what it started.
func TestRun_StopClosesWebhookConnections(t *testing.T) {
	var open, delivered atomic.Int64
	rcv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { delivered.Add(1) }))
	rcv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	rcv.Start()
	defer rcv.Close()

	cfg := config.Default()
	cfg.TLSPolicy = config.TLSDisabled
	cfg.ClientCertEnabled, cfg.WebhookHTTPSOnly = false, false
	cfg.BindAddress, cfg.HTTPPort, cfg.StopTimeoutSeconds = "127.0.0.1", 0, 10
	addr := make(chan string, 1)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	var logs bytes.Buffer
	go func() {
		done <- run(ctx, cfg, zerolog.New(&logs), func(scheme string, a net.Addr) { addr <- scheme + "://" + a.String() })
	}()
	base := <-addr
	call(t, http.MethodPut, base+"/topics/t", `{"properties":{"inputSchema":"EventGridSchema"}}`)
	call(t, http.MethodPut, base+"/topics/t/eventSubscriptions/s", fmt.Sprintf(
		`{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":%q}}}}`, rcv.URL))
	call(t, http.MethodPost, base+"/topics/t/events",
		`[{"id":"1","subject":"s","eventType":"T","eventTime":"2026-01-01T00:00:00Z","dataVersion":"1","data":{}}]`)
	brokertest.Eventually(t, 10*time.Second, func() error {
		if delivered.Load() != 1 || open.Load() != 1 {
			return fmt.Errorf("%d delivered, %d connections open", delivered.Load(), open.Load())
		}
		return nil
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 10*time.Second, func() error {
		if n := open.Load(); n != 0 {
			return fmt.Errorf("%d connections of the stopped broker still open", n)
		}
		return nil
	})
}

// call sends a JSON request to the broker's API and fails the test unless
// it is answered 200.
func call(t *testing.T, method, url, body string) {
	t.Helper()
	req, err := http.NewRequest(method, url+"?api-version=2019-01-01-preview", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s", method, url, resp.Status)
	}
}
