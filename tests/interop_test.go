package tests_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/edgegrid/edgegrid/pkg/testkit/webhooktest"
)

const signingSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// TestInterop_SignedRetriesKeepTheirID: a signed delivery that the
// subscriber refuses twice is retried with the same webhook-id, and every
// attempt verifies with an independent Standard Webhooks verifier.
func TestInterop_SignedRetriesKeepTheirID(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv())
	k := newSink(t, func(n int, _ *http.Request) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	createTopic(t, b.URL, "t", "EventGridSchema")
	createSubscription(t, b.URL, "t", "s", map[string]any{"destination": webhookDest(k.URL, "signingSecret", signingSecret)})
	publish(t, b.URL, "t", egEvents("e", 1))
	k.waitAccepted(t, 1, 10*time.Second)

	reqs := k.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d attempts, want 3", len(reqs))
	}
	for i, r := range reqs {
		if err := webhooktest.VerifyStandardWebhook(signingSecret, r.header, r.body, time.Now()); err != nil {
			t.Errorf("attempt %d: %v", i+1, err)
		}
		if id := r.header.Get("webhook-id"); id != reqs[0].header.Get("webhook-id") {
			t.Errorf("attempt %d: webhook-id %q, want %q as on the first attempt", i+1, id, reqs[0].header.Get("webhook-id"))
		}
	}
	got := mustDo(t, http.MethodGet, b.URL+"/topics/t/eventSubscriptions/s?"+apiVersion, "", nil, http.StatusOK)
	if strings.Contains(string(got), "whsec_") || strings.Contains(b.Output(), "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") {
		t.Error("the signing secret shows in a GET response or the logs")
	}
}

// validationEndpoint answers Event Grid validation events with status and
// the code it was sent, or blocks until the client leaves when status is 0.
func validationEndpoint(t *testing.T, status int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body first: only then does the server notice a client
		// that leaves.
		body, _ := io.ReadAll(r.Body)
		if status == 0 {
			<-r.Context().Done()
			return
		}
		var evs []struct {
			Data struct {
				ValidationCode string `json:"validationCode"`
			} `json:"data"`
		}
		if r.Header.Get("aeg-event-type") != "SubscriptionValidation" || json.Unmarshal(body, &evs) != nil || len(evs) != 1 {
			w.WriteHeader(http.StatusOK) // a notification: accept it
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"validationResponse":%q}`, evs[0].Data.ValidationCode)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook"
}

func TestInterop_Handshakes(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv("api__requestTimeoutInSeconds", "2"))
	createTopic(t, b.URL, "t", "EventGridSchema")
	put := func(name string, dest map[string]any) (int, string) {
		code, _, body := do(t, nil, http.MethodPut, b.URL+"/topics/t/eventSubscriptions/"+name+"?"+apiVersion, "application/json",
			map[string]any{"properties": map[string]any{"destination": dest}})
		return code, string(body)
	}
	closed := "http://" + freeAddr(t) + "/hook" // nothing listens there
	for _, tt := range []struct {
		name, url, mode string
		want            int
		says            string
	}{
		{"EventGridValid", validationEndpoint(t, 200), "EventGrid", 200, ""},
		{"EventGrid202", validationEndpoint(t, 202), "EventGrid", 400, "202 Accepted"},
		{"EventGridSlow", validationEndpoint(t, 0), "EventGrid", 400, "did not answer within"},
		{"EventGridUnreachable", closed, "EventGrid", 400, "could not be reached"},
		{"CloudEventsRefused", validationEndpoint(t, 200), "CloudEvents", 400, "WebHook-Allowed-Origin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, body := put(tt.name, webhookDest(tt.url, "validation", tt.mode))
			if code != tt.want || !strings.Contains(body, tt.says) || !strings.Contains(body, "InvalidDestination") != (tt.want == 200) {
				t.Errorf("PUT = %d %s, want %d saying %q", code, body, tt.want, tt.says)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the PUT took %v: the request timeout must bound the handshake", d)
			}
		})
	}

	t.Run("CloudEventsSDKReceiver", func(t *testing.T) {
		r := webhooktest.StartReceiver(t, cehttp.WithDefaultOptionsHandlerFunc([]string{http.MethodPost}, 6000, []string{"*"}, false))
		createTopic(t, b.URL, "ce", "CloudEventSchemaV1_0")
		createSubscription(t, b.URL, "ce", "s", map[string]any{"destination": webhookDest(r.URL, "validation", "CloudEvents", "contentMode", "Binary")})
		publish(t, b.URL, "ce", []map[string]any{{"specversion": "1.0", "id": "1", "source": "/s", "type": "t"}})
		eventually(t, 10*time.Second, func() error {
			if len(r.Received()) != 1 {
				return fmt.Errorf("%d events received", len(r.Received()))
			}
			return nil
		})
	})
	t.Run("OriginOnDeliveries", func(t *testing.T) {
		k := newSink(t, nil)
		// The sink answers deliveries; the handshake is answered in front
		// of it.
		allow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodOptions {
				w.Header().Set("WebHook-Allowed-Origin", r.Header.Get("WebHook-Request-Origin"))
				w.Header().Set("WebHook-Allowed-Rate", "*")
				return
			}
			k.Config.Handler.ServeHTTP(w, r)
		}))
		defer allow.Close()
		createSubscription(t, b.URL, "t", "origin", map[string]any{"destination": webhookDest(allow.URL, "validation", "CloudEvents")})
		publish(t, b.URL, "t", egEvents("o", 1))
		k.waitAccepted(t, 1, 10*time.Second)
		host, _ := os.Hostname()
		for _, r := range k.requests() {
			if got := r.header.Get("WebHook-Request-Origin"); got != host {
				t.Errorf("WebHook-Request-Origin = %q, want the host name %q", got, host)
			}
		}
	})
	t.Run("ConvertingSubscriptionAccepted", func(t *testing.T) {
		mustDo(t, http.MethodPut, b.URL+"/topics/t/eventSubscriptions/conv?"+apiVersion, "application/json", map[string]any{"properties": map[string]any{
			"eventDeliverySchema": "CloudEventSchemaV1_0", "destination": webhookDest(validationEndpoint(t, 200), "contentMode", "Structured"),
		}}, http.StatusOK)
	})
}

// TestInterop_CloudEventsSDK: the CloudEvents Go SDK's client publishes to
// a CloudEvents topic in binary and structured mode, and the SDK's receiver
// subscribes in each content mode.
func TestInterop_CloudEventsSDK(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv())
	createTopic(t, b.URL, "ce", "CloudEventSchemaV1_0")
	receivers := map[string]*webhooktest.Receiver{}
	for _, mode := range []string{"Structured", "Binary", "Batch"} {
		receivers[mode] = webhooktest.StartReceiver(t)
		createSubscription(t, b.URL, "ce", strings.ToLower(mode), map[string]any{"destination": webhookDest(receivers[mode].URL, "contentMode", mode)})
	}

	client, err := cloudevents.NewClientHTTP()
	if err != nil {
		t.Fatal(err)
	}
	ctx := cloudevents.ContextWithTarget(context.Background(), b.URL+"/topics/ce/events?"+apiVersion)
	var sent []cloudevents.Event
	for i, structured := range []bool{false, true} {
		ev := cloudevents.NewEvent()
		ev.SetID(fmt.Sprint("sdk-", i))
		ev.SetSource("/devices/d1")
		ev.SetType("com.example.reading")
		ev.SetSubject("sensors/t1")
		ev.SetTime(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))
		ev.SetExtension("site", "north")
		if err := ev.SetData(cloudevents.ApplicationJSON, map[string]any{"celsius": 21.5, "tags": []string{"a", "b"}}); err != nil {
			t.Fatal(err)
		}
		sendCtx := ctx
		if structured {
			sendCtx = cloudevents.WithEncodingStructured(ctx)
		}
		if res := client.Send(sendCtx, ev); !cloudevents.IsACK(res) {
			t.Fatalf("publishing with the SDK (structured %v): %v", structured, res)
		}
		sent = append(sent, ev)
	}

	for _, mode := range []string{"Structured", "Binary"} {
		r := receivers[mode]
		eventually(t, 10*time.Second, func() error {
			if n := len(r.Received()); n != len(sent) {
				return fmt.Errorf("%s receiver has %d events, want %d", mode, n, len(sent))
			}
			return nil
		})
		for i, got := range r.Received() {
			want := sent[i]
			if got.ID() != want.ID() || got.Source() != want.Source() || got.Type() != want.Type() || got.Subject() != want.Subject() ||
				!got.Time().Equal(want.Time()) || got.DataContentType() != want.DataContentType() || got.SpecVersion() != "1.0" ||
				fmt.Sprint(got.Extensions()["site"]) != "north" {
				t.Errorf("%s: got %s\nwant %s", mode, got, want)
			}
			var gd, wd any
			_ = json.Unmarshal(got.Data(), &gd)
			_ = json.Unmarshal(want.Data(), &wd)
			if !reflect.DeepEqual(gd, wd) {
				t.Errorf("%s: data %s, want %s", mode, got.Data(), want.Data())
			}
		}
	}
	// Batch (the default) sends a JSON array, which the SDK's receiver
	// does not take: the broker sees failed attempts and keeps retrying.
	eventually(t, 10*time.Second, func() error {
		if len(b.Logs("delivery attempt failed")) == 0 {
			return fmt.Errorf("no failed attempt logged yet")
		}
		return nil
	})
	if n := len(receivers["Batch"].Received()); n != 0 {
		t.Errorf("the SDK receiver took %d events from a batch", n)
	}
}

// TestInterop_ConvertedEventsReachCloudEventsReceivers: an EventGridSchema
// topic feeds a subscription that asks for CloudEvents; the SDK's receiver
// accepts what it gets, mapped as docs/design.md#schema-conversion says.
func TestInterop_ConvertedEventsReachCloudEventsReceivers(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv())
	createTopic(t, b.URL, "eg", "EventGridSchema")
	recv := webhooktest.StartReceiver(t)
	createSubscription(t, b.URL, "eg", "ce", map[string]any{
		"eventDeliverySchema": "CloudEventSchemaV1_0",
		"destination":         webhookDest(recv.URL, "contentMode", "Structured"),
	})
	plain := newSink(t, nil)
	createSubscription(t, b.URL, "eg", "plain", map[string]any{"destination": webhookDest(plain.URL)})
	publish(t, b.URL, "eg", []map[string]any{{
		"id": "e1", "eventType": "Contoso.Reading", "subject": "sensors/7", "eventTime": "2026-03-04T05:06:07.5Z",
		"dataVersion": "2.0", "data": map[string]any{"celsius": 21.5},
	}})
	eventually(t, 10*time.Second, func() error {
		if n := len(recv.Received()); n != 1 {
			return fmt.Errorf("receiver got %d events", n)
		}
		return nil
	})
	ev := recv.Received()[0]
	var data map[string]any
	_ = ev.DataAs(&data)
	if ev.ID() != "e1" || ev.Type() != "Contoso.Reading" || ev.Source() != "eg" || ev.Subject() != "sensors/7" ||
		ev.SpecVersion() != "1.0" || ev.DataContentType() != "application/json" || data["celsius"] != 21.5 ||
		ev.Extensions()["dataversion"] != "2.0" || !ev.Time().Equal(time.Date(2026, 3, 4, 5, 6, 7, 500000000, time.UTC)) {
		t.Errorf("converted event %s", ev)
	}
	// The other subscription still gets the EventGridSchema event.
	if got := plain.waitAccepted(t, 1, 10*time.Second); got["e1"] != 1 {
		t.Errorf("plain subscription got %v", got)
	}
}

// TestInterop_EventsBuiltAsCloudEvents: while every subscription of an
// EventGridSchema topic takes CloudEvents, the broker builds each event as
// its CloudEvent when it is published instead of converting a copy; what
// subscribers get is byte for byte the conversion, for an event of plain
// text and one with escapes alike. Once a subscription takes the events as
// published, it gets them so, and the other still gets CloudEvents.
func TestInterop_EventsBuiltAsCloudEvents(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv())
	createTopic(t, b.URL, "eg", "EventGridSchema")
	ce := newSink(t, nil)
	// Batched, so that the two events published together arrive in one
	// request, in their order: unbatched, each goes in a request of its
	// own, and requests in flight at once arrive in no set order.
	createSubscription(t, b.URL, "eg", "ce", map[string]any{
		"eventDeliverySchema": "CloudEventSchemaV1_0",
		"filter":              map[string]any{"subjectBeginsWith": "sensors/"},
		"destination":         webhookDest(ce.URL, "maxEventsPerBatch", 10),
	})
	const (
		plainIn  = `{"id":"e1","eventType":"Contoso.Reading","subject":"sensors/7","eventTime":"2026-03-04T05:06:07.5Z","dataVersion":"2.0","data":{"celsius":21.5}}`
		plainOut = `{"specversion":"1.0","id":"e1","source":"eg","type":"Contoso.Reading","subject":"sensors/7","time":"2026-03-04T05:06:07.5Z","datacontenttype":"application/json","dataversion":"2.0","data":{"celsius":21.5}}`
		escIn    = `{"id":"e\"2","eventType":"T","subject":"sensors/caf\u00e9","eventTime":"2026-03-04T05:06:07Z","dataVersion":"  ","data":"x"}`
		escOut   = `{"specversion":"1.0","id":"e\"2","source":"eg","type":"T","subject":"sensors/caf\u00e9","time":"2026-03-04T05:06:07Z","datacontenttype":"application/json","data":"x"}`
		thirdIn  = `{"id":"e3","eventType":"T","subject":"sensors/8","eventTime":"2026-03-04T05:06:08Z","dataVersion":"1","data":null}`
		thirdOut = `{"specversion":"1.0","id":"e3","source":"eg","type":"T","subject":"sensors/8","time":"2026-03-04T05:06:08Z","datacontenttype":"application/json","dataversion":"1","data":null}`
	)
	publish(t, b.URL, "eg", "["+plainIn+","+escIn+"]")
	waitBodies(t, ce, plainOut, escOut)

	plain := newSink(t, nil)
	createSubscription(t, b.URL, "eg", "plain", map[string]any{"destination": webhookDest(plain.URL)})
	publish(t, b.URL, "eg", "["+thirdIn+"]")
	waitBodies(t, ce, plainOut, escOut, thirdOut)
	waitBodies(t, plain, `{"id":"e3","topic":"eg","subject":"sensors/8","eventType":"T","eventTime":"2026-03-04T05:06:08Z","data":null,"dataVersion":"1","metadataVersion":"1"}`)
}

// waitBodies waits until s has accepted exactly the events want, each as
// its JSON text, in that order.
func waitBodies(t *testing.T, s *sink, want ...string) {
	t.Helper()
	var got []string
	eventually(t, 10*time.Second, func() error {
		got = nil
		for _, r := range s.requests() {
			var evs []json.RawMessage
			if err := json.Unmarshal(r.body, &evs); err != nil {
				return fmt.Errorf("a delivery that is not a JSON array: %s", r.body)
			}
			for _, ev := range evs {
				got = append(got, string(ev))
			}
		}
		if len(got) < len(want) {
			return fmt.Errorf("%d of %d events", len(got), len(want))
		}
		return nil
	})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
