package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

type request struct {
	header http.Header
	body   []byte
}

// sink is a real HTTP server on a loopback port that records requests and
// answers with status.
type sink struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	reqs   []request
	conns  atomic.Int32
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.status.Store(200)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, request{header: r.Header.Clone(), body: b})
		s.mu.Unlock()
		w.WriteHeader(int(s.status.Load()))
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *sink) last(t *testing.T) request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("no request received")
	}
	return s.reqs[len(s.reqs)-1]
}

func egEvent(id, topic string) *eventgrid.Event {
	body := `{"id":"` + id + `","topic":"` + topic + `","subject":"s","eventType":"T","eventTime":"2020-01-01T00:00:00Z","data":{"a":1},"dataVersion":"2.0","metadataVersion":"1"}`
	return &eventgrid.Event{ID: id, Type: "T", Subject: "s", HasSubject: true, DataVersion: "2.0", Body: []byte(body)}
}

func batch(sub *eventgrid.EventSubscription, count int, evs ...*eventgrid.Event) *push.Batch {
	bodies := make([][]byte, len(evs))
	for i, ev := range evs {
		bodies[i] = ev.Body
	}
	return &push.Batch{Subscription: sub, Bodies: bodies, DeliveryCount: count}
}

func webhookSub(url string, schema eventgrid.InputSchema) *eventgrid.EventSubscription {
	return &eventgrid.EventSubscription{Topic: "t1", Name: "Sub1", EventDeliverySchema: schema,
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: url}}
}

func TestSender_Send(t *testing.T) {
	s := webhook.New(webhook.Options{UserAgent: "edgegrid/test"})

	t.Run("EventGridSchemaHeadersAndBody", func(t *testing.T) {
		k := newSink(t)
		err := s.Send(context.Background(), batch(webhookSub(k.URL+"/api/x", eventgrid.EventGridSchema), 3, egEvent("1", "t1"), egEvent("2", "t1")))
		if err != nil {
			t.Fatal(err)
		}
		r := k.last(t)
		want := map[string]string{
			"Content-Type":          "application/json; charset=utf-8",
			"Aeg-Event-Type":        "Notification",
			"Aeg-Subscription-Name": "Sub1",
			"Aeg-Delivery-Count":    "3",
			"Aeg-Metadata-Version":  "1",
			"Aeg-Data-Version":      "2.0",
			"User-Agent":            "edgegrid/test",
		}
		for h, v := range want {
			if got := r.header.Get(h); got != v {
				t.Errorf("%s = %q, want %q", h, got, v)
			}
		}
		var arr []map[string]any
		if err := json.Unmarshal(r.body, &arr); err != nil || len(arr) != 2 {
			t.Fatalf("body %s is not a 2-element array: %v", r.body, err)
		}
		if r.header.Get("aeg-sas-key") != "" {
			t.Error("aeg-sas-key sent to a webhook")
		}
	})

	t.Run("SingleEventIsStillAnArray", func(t *testing.T) {
		k := newSink(t)
		ev := &eventgrid.Event{Body: []byte(`{"custom" : [1, 2]}`)}
		if err := s.Send(context.Background(), batch(webhookSub(k.URL, eventgrid.CustomEventSchema), 0, ev)); err != nil {
			t.Fatal(err)
		}
		r := k.last(t)
		if string(r.body) != `[{"custom" : [1, 2]}]` {
			t.Errorf("body %s: custom events must leave byte-for-byte inside an array", r.body)
		}
		if r.header.Get("aeg-data-version") != "" {
			t.Error("aeg-data-version sent for a custom event")
		}
	})

	t.Run("CloudEventsContentType", func(t *testing.T) {
		k := newSink(t)
		ev := &eventgrid.Event{ID: "1", Body: []byte(`{"specversion":"1.0","id":"1","source":"s","type":"t"}`)}
		if err := s.Send(context.Background(), batch(webhookSub(k.URL, eventgrid.CloudEventSchemaV1_0), 0, ev)); err != nil {
			t.Fatal(err)
		}
		if ct := k.last(t).header.Get("Content-Type"); ct != "application/cloudevents-batch+json; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
	})

	t.Run("EventGridDestination", func(t *testing.T) {
		k := newSink(t)
		sub := &eventgrid.EventSubscription{Topic: "t1", Name: "fwd", EventDeliverySchema: eventgrid.EventGridSchema,
			Destination: eventgrid.Destination{EndpointType: eventgrid.EventGrid, EndpointURL: k.URL + "/api/events?api-version=2018-01-01", SASKey: "secret-key", TopicName: "cloudTopic"}}
		if err := s.Send(context.Background(), batch(sub, 0, egEvent("1", "t1"))); err != nil {
			t.Fatal(err)
		}
		r := k.last(t)
		if r.header.Get("aeg-sas-key") != "secret-key" {
			t.Error("aeg-sas-key missing")
		}
		var arr []map[string]any
		_ = json.Unmarshal(r.body, &arr)
		if len(arr) != 1 || arr[0]["topic"] != "cloudTopic" {
			t.Errorf("topic not rewritten to topicName: %s", r.body)
		}
		sub.Destination.TopicName = ""
		if err := s.Send(context.Background(), batch(sub, 0, egEvent("1", "t1"))); err != nil {
			t.Fatal(err)
		}
		arr = nil
		_ = json.Unmarshal(k.last(t).body, &arr)
		if v, ok := arr[0]["topic"]; !ok || v != nil {
			t.Errorf("topic not nulled without topicName: %s", k.last(t).body)
		}
		// Its failures are the EventGrid destination's, not a webhook's.
		k.status.Store(503)
		defer k.status.Store(200)
		if err := s.Send(context.Background(), batch(sub, 0, egEvent("1", "t1"))); err == nil || err.Error() != "eventgrid: destination answered 503 Service Unavailable" {
			t.Errorf("EventGrid failure = %v", err)
		}
		sub.Destination.EndpointURL = "http://127.0.0.1:1/api/events?api-version=2018-01-01"
		if err := s.Send(context.Background(), batch(sub, 0, egEvent("1", "t1"))); err == nil || !strings.HasPrefix(err.Error(), "eventgrid: ") {
			t.Errorf("EventGrid connection failure = %v", err)
		}
	})

	// 200 to 204 are success (docs/design.md#delivery-success-and-retries);
	// what failures carry, TestSenderContract checks.
	t.Run("StatusCodes", func(t *testing.T) {
		k := newSink(t)
		sub := webhookSub(k.URL, eventgrid.EventGridSchema)
		for code, ok := range map[int]bool{200: true, 201: true, 202: true, 203: true, 204: true, 205: false, 301: false} {
			k.status.Store(int32(code))
			err := s.Send(context.Background(), batch(sub, 0, egEvent("1", "t1")))
			if (err == nil) != ok {
				t.Errorf("status %d: err = %v, want success %v", code, err, ok)
			}
			var we *webhook.Error
			if err != nil && (!errors.As(err, &we) || we.Status != code) {
				t.Errorf("status %d: error %v does not carry the status", code, err)
			}
		}
	})

	t.Run("RedirectNotFollowed", func(t *testing.T) {
		k := newSink(t)
		redirect := httptest.NewServer(http.RedirectHandler(k.URL, http.StatusTemporaryRedirect))
		defer redirect.Close()
		err := s.Send(context.Background(), batch(webhookSub(redirect.URL, eventgrid.EventGridSchema), 0, egEvent("1", "t1")))
		if err == nil {
			t.Fatal("a redirect counted as success")
		}
		k.mu.Lock()
		n := len(k.reqs)
		k.mu.Unlock()
		if n != 0 {
			t.Error("redirect was followed")
		}
	})

	t.Run("TimeoutAndNoSecretsInErrors", func(t *testing.T) {
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body) // after the body, the server notices the client leaving
			<-r.Context().Done()
		}))
		defer hang.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := s.Send(ctx, batch(webhookSub(hang.URL+"/x?code=supersecret", eventgrid.EventGridSchema), 0, egEvent("1", "t1")))
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("err = %v, want a timeout", err)
		}
		if err != nil && strings.Contains(err.Error(), "supersecret") {
			t.Errorf("error text leaks the URL: %v", err)
		}
		// Connection refused: take a port and close it.
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		err = s.Send(context.Background(), batch(webhookSub("http://"+addr+"/?sig=supersecret", eventgrid.EventGridSchema), 0, egEvent("1", "t1")))
		if err == nil || strings.Contains(err.Error(), "supersecret") {
			t.Errorf("connection refused: err = %v", err)
		}
	})

	t.Run("ReusesConnections", func(t *testing.T) {
		k := newSink(t)
		sub := webhookSub(k.URL, eventgrid.EventGridSchema)
		for range 20 {
			if err := s.Send(context.Background(), batch(sub, 0, egEvent("1", "t1"))); err != nil {
				t.Fatal(err)
			}
		}
		if n := k.conns.Load(); n != 1 {
			t.Errorf("%d connections for 20 sequential requests, want 1", n)
		}
	})
}
