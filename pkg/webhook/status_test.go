package webhook_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/push"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// A connection refused classifies as a socket error. (What every sender
// does with statuses, Retry-After and timeouts, TestSenderContract checks.)
func TestSender_ConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	s := webhook.New(webhook.Options{})
	err = s.Send(context.Background(), batch(webhookSub(url, eventgrid.EventGridSchema), 0, egEvent("1", "t")))
	if got := push.Classify(err); got.Outcome != push.OutcomeSocketError {
		t.Errorf("connection refused: %+v", got)
	}
}

func TestSender_HeadersBatchAndKey(t *testing.T) {
	k := newSink(t)
	s := webhook.New(webhook.Options{})
	ev := func(id, version string) *eventgrid.Event {
		e := egEvent(id, "t")
		e.Body = []byte(strings.Replace(string(e.Body), `"dataVersion":"2.0"`, `"dataVersion":"`+version+`"`, 1))
		return e
	}
	sub := webhookSub(k.URL, eventgrid.EventGridSchema)
	if err := s.Send(context.Background(), batch(sub, 0, ev("1", "2.0"), ev("2", "3.0"))); err != nil {
		t.Fatal(err)
	}
	if h := k.last(t).header; h.Values("aeg-data-version") != nil {
		t.Errorf("a batch of mixed versions sent aeg-data-version %q", h.Get("aeg-data-version"))
	}
	if err := s.Send(context.Background(), batch(sub, 0, ev("1", "2.0"), ev("2", "2.0"))); err != nil {
		t.Fatal(err)
	}
	if got := k.last(t).header.Get("aeg-data-version"); got != "2.0" {
		t.Errorf("a batch of one version sent aeg-data-version %q", got)
	}
	eg := webhookSub(k.URL, eventgrid.EventGridSchema)
	eg.Destination.EndpointType = eventgrid.EventGrid
	if err := s.Send(context.Background(), batch(eg, 0, ev("1", "2.0"))); err != nil {
		t.Fatal(err)
	}
	if h := k.last(t).header; h.Values("aeg-sas-key") != nil {
		t.Errorf("an EventGrid destination without a key sent aeg-sas-key %q", h.Get("aeg-sas-key"))
	}
}
