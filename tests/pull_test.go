package tests_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/messaging"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/eventgrid/aznamespaces"

	"github.com/edgegrid/edgegrid/pkg/testkit/testpki"
	"github.com/edgegrid/edgegrid/pkg/testkit/webhooktest"
)

const pullKey = "cHVsbC1kZWxpdmVyeS10ZXN0LWtleS0xMjM0NTY="

// pullBroker is a broker serving HTTPS only, with a certificate from a test
// CA, SAS keys and Prometheus metrics: what the namespace SDK needs (azcore
// refuses to send a key over plain HTTP).
type pullBroker struct {
	*broker
	http *http.Client // trusts the test CA
	cred *azcore.KeyCredential
}

func startPullBroker(t *testing.T, kv ...string) *pullBroker {
	t.Helper()
	ca := testpki.NewCA(t, "pull test CA")
	dir := t.TempDir()
	certFile, keyFile := ca.WriteFiles(t, dir, "127.0.0.1")
	testpki.MustWriteFile(t, filepath.Join(dir, "ca.pem"), ca.PEM())
	env := merge(devEnv(), append([]string{
		"inbound__serverAuth__tlsPolicy", "strict",
		"inbound__serverAuth__serverCert__source", "File",
		"inbound__serverAuth__serverCert__certFile", certFile,
		"inbound__serverAuth__serverCert__keyFile", keyFile,
		"inbound__clientAuth__sasKeys__enabled", "true",
		"inbound__clientAuth__sasKeys__key1", pullKey,
		"metrics__reporterType", "prometheus",
	}, kv...)...)
	b := startBroker(t, env)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	t.Cleanup(client.CloseIdleConnections)
	return &pullBroker{broker: b, http: client, cred: azcore.NewKeyCredential(pullKey)}
}

// mgmt sends a management request with the key.
func (p *pullBroker) mgmt(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	code, _, rb := do(t, p.http, method, p.TLS+path+sep+apiVersion, "application/json", body, "aeg-sas-key", pullKey)
	return code, rb
}

func (p *pullBroker) mustMgmt(t *testing.T, method, path string, body any) []byte {
	t.Helper()
	code, rb := p.mgmt(t, method, path, body)
	if code != http.StatusOK {
		t.Fatalf("%s %s = %d: %s", method, path, code, rb)
	}
	return rb
}

func (p *pullBroker) clientOptions() azcore.ClientOptions {
	return azcore.ClientOptions{Transport: p.http, Retry: policy.RetryOptions{MaxRetries: -1}}
}

func (p *pullBroker) sender(t *testing.T, topic string) *aznamespaces.SenderClient {
	t.Helper()
	c, err := aznamespaces.NewSenderClientWithSharedKeyCredential(p.TLS, topic, p.cred, &aznamespaces.SenderClientOptions{ClientOptions: p.clientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (p *pullBroker) receiver(t *testing.T, topic, sub string) *aznamespaces.ReceiverClient {
	t.Helper()
	c, err := aznamespaces.NewReceiverClientWithSharedKeyCredential(p.TLS, topic, sub, p.cred, &aznamespaces.ReceiverClientOptions{ClientOptions: p.clientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func queueProps(queue map[string]any) map[string]any {
	return map[string]any{"deliveryConfiguration": map[string]any{"deliveryMode": "Queue", "queue": queue}}
}

func cloudEvents(t *testing.T, prefix string, n int) []*messaging.CloudEvent {
	t.Helper()
	out := make([]*messaging.CloudEvent, n)
	for i := range out {
		ev, err := messaging.NewCloudEvent("/devices/d1", "com.example.reading", map[string]any{"n": i}, &messaging.CloudEventOptions{
			DataContentType: to.Ptr("application/json"),
			Subject:         to.Ptr(fmt.Sprint("sensors/", i)),
		})
		if err != nil {
			t.Fatal(err)
		}
		ev.ID = fmt.Sprint(prefix, i)
		out[i] = &ev
	}
	return out
}

func receive(t *testing.T, r *aznamespaces.ReceiverClient, maxEvents, wait int32) []aznamespaces.ReceiveDetails {
	t.Helper()
	resp, err := r.ReceiveEvents(t.Context(), &aznamespaces.ReceiveEventsOptions{MaxEvents: &maxEvents, MaxWaitTime: &wait})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	return resp.Details
}

func lockTokens(ds []aznamespaces.ReceiveDetails) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = *d.BrokerProperties.LockToken
	}
	return out
}

func ids(ds []aznamespaces.ReceiveDetails) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Event.ID
	}
	return out
}

func statusCode(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// TestPull_SDK drives every operation with the official Azure SDK for Go.
func TestPull_SDK(t *testing.T) {
	t.Parallel() // mostly receives waiting for nothing (see doc.go)
	p := startPullBroker(t)
	p.mustMgmt(t, http.MethodPut, "/topics/orders", map[string]any{"properties": map[string]any{"inputSchema": "CloudEventSchemaV1_0"}})
	p.mustMgmt(t, http.MethodPut, "/topics/orders/eventSubscriptions/app1", map[string]any{"properties": queueProps(map[string]any{"receiveLockDurationInSeconds": 60, "maxDeliveryCount": 5, "eventTimeToLive": "PT1H"})})
	p.mustMgmt(t, http.MethodPut, "/topics/orders/eventSubscriptions/app2", map[string]any{"properties": queueProps(nil)})
	hook := webhooktest.StartReceiver(t)
	p.mustMgmt(t, http.MethodPut, "/topics/orders/eventSubscriptions/push", map[string]any{"properties": map[string]any{"destination": webhookDest(hook.URL, "contentMode", "Structured")}})

	sender := p.sender(t, "orders")
	if _, err := sender.SendEvents(t.Context(), cloudEvents(t, "batch-", 3), nil); err != nil {
		t.Fatalf("SendEvents: %v", err)
	}
	if _, err := sender.SendEvent(t.Context(), cloudEvents(t, "single-", 1)[0], nil); err != nil {
		t.Fatalf("SendEvent: %v", err)
	}
	app1 := p.receiver(t, "orders", "app1")

	t.Run("ReceiveOldestFirst", func(t *testing.T) {
		got := receive(t, app1, 2, 10)
		if want := []string{"batch-0", "batch-1"}; fmt.Sprint(ids(got)) != fmt.Sprint(want) {
			t.Fatalf("received %v, want %v", ids(got), want)
		}
		for _, d := range got {
			if *d.BrokerProperties.DeliveryCount != 1 || d.Event.Source != "/devices/d1" || *d.Event.Subject == "" {
				t.Fatalf("received %+v", d)
			}
		}
		// Acknowledge with a bogus token beside: partial success.
		res, err := app1.AcknowledgeEvents(t.Context(), []string{lockTokens(got)[0], "bogus"}, nil)
		if err != nil {
			t.Fatalf("acknowledge: %v", err)
		}
		if len(res.SucceededLockTokens) != 1 || len(res.FailedLockTokens) != 1 || *res.FailedLockTokens[0].Error.Code != "BadRequest" {
			t.Fatalf("acknowledge answered %+v", res.AcknowledgeEventsResult)
		}
		// Acknowledging again: no token succeeds, and the answer says so
		// token by token, with no error.
		second, err := app1.AcknowledgeEvents(t.Context(), lockTokens(got)[:1], nil)
		if err != nil || len(second.SucceededLockTokens) != 0 || len(second.FailedLockTokens) != 1 || *second.FailedLockTokens[0].Error.Code != "TokenLost" {
			t.Fatalf("second acknowledge: %+v, %v; want TokenLost for the token and no error", second.AcknowledgeEventsResult, err)
		}
		// Release the other: it goes to the back, delivered a second time.
		if res, err := app1.ReleaseEvents(t.Context(), lockTokens(got)[1:], nil); err != nil || len(res.SucceededLockTokens) != 1 {
			t.Fatalf("release: %+v, %v", res, err)
		}
		rest := receive(t, app1, 10, 10)
		if want := []string{"batch-2", "single-0", "batch-1"}; fmt.Sprint(ids(rest)) != fmt.Sprint(want) {
			t.Fatalf("received %v, want %v", ids(rest), want)
		}
		if n := *rest[2].BrokerProperties.DeliveryCount; n != 2 {
			t.Fatalf("released event's deliveryCount %d, want 2", n)
		}
		if res, err := app1.RenewEventLocks(t.Context(), lockTokens(rest), nil); err != nil || len(res.SucceededLockTokens) != 3 {
			t.Fatalf("renew: %+v, %v", res, err)
		}
		if res, err := app1.RejectEvents(t.Context(), lockTokens(rest)[:1], nil); err != nil || len(res.SucceededLockTokens) != 1 {
			t.Fatalf("reject: %+v, %v", res, err)
		}
		if res, err := app1.ReleaseEvents(t.Context(), lockTokens(rest)[1:2], &aznamespaces.ReleaseEventsOptions{ReleaseDelayInSeconds: to.Ptr(aznamespaces.ReleaseDelayTenSeconds)}); err != nil || len(res.SucceededLockTokens) != 1 {
			t.Fatalf("release with delay: %+v, %v", res, err)
		}
		var sub struct {
			Properties struct {
				DeliveryConfiguration struct {
					DeliveryMode string
					Queue        map[string]any
				}
				DeliveryStatus struct{ Available, Locked, Delayed int }
			}
		}
		if err := json.Unmarshal(p.mustMgmt(t, http.MethodGet, "/topics/orders/eventSubscriptions/app1", nil), &sub); err != nil {
			t.Fatal(err)
		}
		if ds := sub.Properties.DeliveryStatus; ds.Available != 0 || ds.Locked != 1 || ds.Delayed != 1 {
			t.Fatalf("deliveryStatus %v; want 1 locked, 1 delayed", ds)
		}
		if q := sub.Properties.DeliveryConfiguration; q.DeliveryMode != "Queue" || q.Queue["maxDeliveryCount"] != 5.0 || q.Queue["eventTimeToLive"] != "PT1H" {
			t.Fatalf("deliveryConfiguration %+v", q)
		}
		// The delayed event is back after 10 s.
		again := receive(t, app1, 10, 30)
		if fmt.Sprint(ids(again)) != "[single-0]" {
			t.Fatalf("after the release delay: %v", ids(again))
		}
		app1.AcknowledgeEvents(t.Context(), append(lockTokens(again), lockTokens(rest)[2]), nil)
	})

	t.Run("FanOut", func(t *testing.T) {
		got := receive(t, p.receiver(t, "orders", "app2"), 100, 10)
		if len(got) != 4 {
			t.Fatalf("app2 received %v; want its own copy of all 4", ids(got))
		}
		eventually(t, 10*time.Second, func() error {
			if n := len(hook.Received()); n != 4 {
				return fmt.Errorf("push subscription got %d of 4", n)
			}
			return nil
		})
	})

	t.Run("AllFailedSettlement", func(t *testing.T) {
		// Every operation answers a settlement whose every token failed
		// with the outcome of each token, and no error.
		if _, err := sender.SendEvent(t.Context(), cloudEvents(t, "settled-", 1)[0], nil); err != nil {
			t.Fatal(err)
		}
		got := receive(t, app1, 1, 10)
		if _, err := app1.AcknowledgeEvents(t.Context(), lockTokens(got), nil); err != nil {
			t.Fatal(err)
		}
		toks := append(lockTokens(got), "bogus")
		type outcome struct {
			succeeded []string
			failed    []aznamespaces.FailedLockToken
			err       error
		}
		for op, settle := range map[string]func() outcome{
			"acknowledge": func() outcome {
				r, err := app1.AcknowledgeEvents(t.Context(), toks, nil)
				return outcome{r.SucceededLockTokens, r.FailedLockTokens, err}
			},
			"release": func() outcome {
				r, err := app1.ReleaseEvents(t.Context(), toks, nil)
				return outcome{r.SucceededLockTokens, r.FailedLockTokens, err}
			},
			"reject": func() outcome {
				r, err := app1.RejectEvents(t.Context(), toks, nil)
				return outcome{r.SucceededLockTokens, r.FailedLockTokens, err}
			},
			"renewLock": func() outcome {
				r, err := app1.RenewEventLocks(t.Context(), toks, nil)
				return outcome{r.SucceededLockTokens, r.FailedLockTokens, err}
			},
		} {
			o := settle()
			if o.err != nil || len(o.succeeded) != 0 || len(o.failed) != 2 || *o.failed[0].Error.Code != "TokenLost" || *o.failed[1].Error.Code != "BadRequest" {
				t.Errorf("%s of an acknowledged and a bogus token: %v succeeded, %d failed, %v; want both failed, TokenLost and BadRequest, and no error", op, o.succeeded, len(o.failed), o.err)
			}
		}
	})

	t.Run("LongPollWokenByPublish", func(t *testing.T) {
		type answer struct {
			ds  []aznamespaces.ReceiveDetails
			err error
			at  time.Time
		}
		ch := make(chan answer, 1)
		go func() {
			resp, err := app1.ReceiveEvents(context.Background(), &aznamespaces.ReceiveEventsOptions{MaxEvents: to.Ptr[int32](5), MaxWaitTime: to.Ptr[int32](60)})
			ch <- answer{resp.Details, err, time.Now()}
		}()
		eventually(t, 10*time.Second, func() error {
			if p.metric(t, `eventgrid_queue_receives_waiting{subscription="app1",topic="orders"}`) != 1 {
				return errors.New("the receive is not waiting yet")
			}
			return nil
		})
		sent := time.Now()
		if _, err := sender.SendEvent(t.Context(), cloudEvents(t, "wake-", 1)[0], nil); err != nil {
			t.Fatal(err)
		}
		a := <-ch
		if a.err != nil || fmt.Sprint(ids(a.ds)) != "[wake-0]" {
			t.Fatalf("woken receive: %v, %v", ids(a.ds), a.err)
		}
		t.Logf("receive answered %v after the publish", a.at.Sub(sent))
		if a.at.Sub(sent) > 5*time.Second {
			t.Fatalf("the receive waited %v after the publish", a.at.Sub(sent))
		}
		app1.AcknowledgeEvents(t.Context(), lockTokens(a.ds), nil)
	})

	t.Run("EmptyAfterMaxWaitTime", func(t *testing.T) {
		start := time.Now()
		got := receive(t, app1, 1, 10)
		if len(got) != 0 || time.Since(start) < 10*time.Second {
			t.Fatalf("received %v after %v; want nothing after 10 s", ids(got), time.Since(start))
		}
	})

	t.Run("BinaryModePublish", func(t *testing.T) {
		code, _, rb := do(t, p.http, http.MethodPost, p.TLS+"/topics/orders:publish?api-version=2023-11-01", "application/json", `{"n":1}`,
			"Authorization", "SharedAccessKey "+pullKey, "ce-specversion", "1.0", "ce-id", "bin-1", "ce-source", "/bin", "ce-type", "com.example.binary")
		if code != http.StatusOK || string(rb) != "{}" {
			t.Fatalf("binary publish: %d %s", code, rb)
		}
		got := receive(t, app1, 1, 10)
		if len(got) != 1 || got[0].Event.ID != "bin-1" || got[0].Event.Type != "com.example.binary" || string(got[0].Event.Data.([]byte)) != `{"n":1}` {
			t.Fatalf("received %+v", got)
		}
		app1.AcknowledgeEvents(t.Context(), lockTokens(got), nil)
	})

	t.Run("Refusals", func(t *testing.T) {
		bad, _ := aznamespaces.NewReceiverClientWithSharedKeyCredential(p.TLS, "orders", "app1", azcore.NewKeyCredential("d3Jvbmc="), &aznamespaces.ReceiverClientOptions{ClientOptions: p.clientOptions()})
		if _, err := bad.ReceiveEvents(t.Context(), nil); statusCode(err) != http.StatusUnauthorized {
			t.Errorf("wrong key: %v; want 401", err)
		}
		if _, err := p.receiver(t, "orders", "nosuch").ReceiveEvents(t.Context(), nil); statusCode(err) != http.StatusNotFound {
			t.Errorf("missing subscription: %v; want 404", err)
		}
		if _, err := p.receiver(t, "nosuch", "app1").ReceiveEvents(t.Context(), nil); statusCode(err) != http.StatusNotFound {
			t.Errorf("missing topic: %v; want 404", err)
		}
		if _, err := p.receiver(t, "orders", "push").ReceiveEvents(t.Context(), nil); statusCode(err) != http.StatusBadRequest {
			t.Errorf("receive on a push subscription: %v; want 400", err)
		}
		for _, q := range []string{"maxEvents=0", "maxEvents=101", "maxWaitTime=5", "maxWaitTime=121", "maxEvents=x"} {
			code, _, rb := do(t, p.http, http.MethodPost, p.TLS+"/topics/orders/eventsubscriptions/app1:receive?api-version=2024-06-01&"+q, "", nil, "Authorization", "SharedAccessKey "+pullKey)
			if code != http.StatusBadRequest || !strings.Contains(string(rb), strings.Split(q, "=")[0]) {
				t.Errorf("receive with %s: %d %s; want 400 naming the parameter", q, code, rb)
			}
		}
		code, _, rb := do(t, p.http, http.MethodPost, p.TLS+"/topics/orders/eventsubscriptions/app1:release?api-version=2024-06-01&releaseDelayInSeconds=5", "application/json", `{"lockTokens":["x"]}`, "Authorization", "SharedAccessKey "+pullKey)
		if code != http.StatusBadRequest || !strings.Contains(string(rb), "releaseDelayInSeconds") {
			t.Errorf("release with delay 5: %d %s", code, rb)
		}
		code, _, rb = do(t, p.http, http.MethodPost, p.TLS+"/topics/orders/eventsubscriptions/app1:renewLock?api-version=2023-11-01", "application/json", `{"lockTokens":["x"]}`, "Authorization", "SharedAccessKey "+pullKey)
		if code != http.StatusBadRequest || !strings.Contains(string(rb), "api-version") {
			t.Errorf("renewLock at 2023-11-01: %d %s", code, rb)
		}
		code, _, rb = do(t, p.http, http.MethodPost, p.TLS+"/topics/orders/eventSubscriptions/$receive/app1?api-version=2024-06-01", "", nil, "Authorization", "SharedAccessKey "+pullKey)
		if code != http.StatusNotFound {
			t.Errorf("the rewritten path asked for itself: %d %s; want 404", code, rb)
		}
		for name, props := range map[string]map[string]any{
			"receiveLockDurationInSeconds": queueProps(map[string]any{"receiveLockDurationInSeconds": 30}),
			"maxDeliveryCount":             queueProps(map[string]any{"maxDeliveryCount": 101}),
			"eventTimeToLive":              queueProps(map[string]any{"eventTimeToLive": "P30D"}),
			"destination":                  merge2(queueProps(nil), "destination", webhookDest(hook.URL)),
			"deliveryMode":                 {"deliveryConfiguration": map[string]any{"deliveryMode": "Teleport"}},
		} {
			code, rb := p.mgmt(t, http.MethodPut, "/topics/orders/eventSubscriptions/bad", map[string]any{"properties": props})
			if code != http.StatusBadRequest || !strings.Contains(string(rb), name) {
				t.Errorf("%s out of range: %d %s; want 400 naming the field", name, code, rb)
			}
		}
	})
}

// metric returns the value of one series of /metrics (0 when absent).
func (p *pullBroker) metric(t *testing.T, series string) float64 {
	t.Helper()
	code, _, rb := do(t, p.http, http.MethodGet, p.TLS+"/metrics", "", nil, "aeg-sas-key", pullKey)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, line := range strings.Split(string(rb), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	return 0
}

func merge2(m map[string]any, k string, v any) map[string]any {
	m[k] = v
	return m
}
