package resource_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

func TestParseISODuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"P1D": 24 * time.Hour, "PT1H": time.Hour, "PT30M": 30 * time.Minute, "PT1.5S": 1500 * time.Millisecond,
		"P1W": 7 * 24 * time.Hour, "P1DT2H3M4S": 26*time.Hour + 3*time.Minute + 4*time.Second, "pt10m": 10 * time.Minute,
	} {
		if got, err := resource.ParseISODuration(in); err != nil || got != want {
			t.Errorf("ParseISODuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "P", "PT", "1D", "P1Y", "P1M", "PT1D", "P1H", "P1DT", "PTXS", "P-1D", "P1D1D2"} {
		if got, err := resource.ParseISODuration(in); err == nil {
			t.Errorf("ParseISODuration(%q) = %v; want an error", in, got)
		}
	}
}

func TestDecodeQueueSubscription(t *testing.T) {
	sub, err := resource.DecodeSubscription([]byte(`{"properties":{"deliveryConfiguration":{"deliveryMode":"queue","queue":{
		"receiveLockDurationInSeconds":120,"maxDeliveryCount":3,"eventTimeToLive":"PT2H",
		"deadLetterDestination":{"endpointType":"StorageBlob","properties":{"blobContainerName":"deadletters","connectionString":"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1"}}}},
		"filtersConfiguration":{"includedEventTypes":["a"],"filters":[{"operatorType":"StringIn","key":"subject","values":["x"]}]}}}`), "t", "s")
	if err != nil {
		t.Fatal(err)
	}
	q := sub.Queue
	if q == nil || q.ReceiveLockSeconds != 120 || q.MaxDeliveryCount != 3 || q.EventTimeToLive != 2*time.Hour || q.EventTimeToLiveText != "PT2H" {
		t.Fatalf("queue %+v", q)
	}
	if sub.DeadLetter == nil || sub.DeadLetter.ContainerName != "deadletters" {
		t.Fatalf("dead letter %+v", sub.DeadLetter)
	}
	if f := sub.Filter; f == nil || len(f.IncludedEventTypes) != 1 || len(f.AdvancedFilters) != 1 {
		t.Fatalf("filter %+v", f)
	}
	defaults, err := resource.DecodeSubscription([]byte(`{"properties":{"deliveryConfiguration":{"deliveryMode":"Queue"}}}`), "t", "s")
	if err != nil || *defaults.Queue != (eventgrid.QueueConfig{ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: eventgrid.DefaultQueueEventTTL}) {
		t.Fatalf("defaults: %+v, %v", defaults.Queue, err)
	}
	for field, body := range map[string]string{
		"receiveLockDurationInSeconds":       `{"deliveryMode":"Queue","queue":{"receiveLockDurationInSeconds":301}}`,
		"maxDeliveryCount":                   `{"deliveryMode":"Queue","queue":{"maxDeliveryCount":0}}`,
		"queue.maxDeliveryCount":             `{"deliveryMode":"Queue","queue":{"maxDeliveryCount":"5"}}`,
		"queue.receiveLockDurationInSeconds": `{"deliveryMode":"Queue","queue":{"receiveLockDurationInSeconds":"60"}}`,
		"eventTimeToLive":                    `{"deliveryMode":"Queue","queue":{"eventTimeToLive":"tomorrow"}}`,
		"deliveryMode":                       `{"deliveryMode":"Carrier"}`,
		"blobContainerName":                  `{"deliveryMode":"Queue","queue":{"deadLetterDestination":{"endpointType":"StorageBlob","properties":{"connectionString":"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1"}}}}`,
	} {
		_, err := resource.DecodeSubscription([]byte(`{"properties":{"deliveryConfiguration":`+body+`}}`), "t", "s")
		if err == nil || !strings.Contains(eventgrid.ErrorMessage(err), field) {
			t.Errorf("%s: %v; want an error naming it", field, err)
		}
	}
	_, err = resource.DecodeSubscription([]byte(`{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://x"}},"deliveryConfiguration":{"deliveryMode":"Queue"}}}`), "t", "s")
	if err == nil || !strings.Contains(eventgrid.ErrorMessage(err), "properties.destination") {
		t.Errorf("destination beside Queue: %v", err)
	}
}
