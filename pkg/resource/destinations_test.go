package resource_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

func TestDecodeBrokerDestinations(t *testing.T) {
	const cs = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=c2VjcmV0;EntityPath=q"
	tests := []struct {
		body string
		want eventgrid.Destination
	}{
		{`{"endpointType":"edgeHub","properties":{"outputName":"sampleSub4","maxEventsPerBatch":5}}`,
			eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "sampleSub4", MaxEventsPerBatch: 5}},
		{`{"endpointType":"eventHub","properties":{"connectionString":"` + cs + `"}}`,
			eventgrid.Destination{EndpointType: eventgrid.EventHub, ConnectionString: cs}},
		{`{"endpointType":"serviceBusQueue","properties":{"ConnectionString":"` + cs + `"}}`,
			eventgrid.Destination{EndpointType: eventgrid.ServiceBusQueue, ConnectionString: cs}},
		{`{"endpointType":"ServiceBusTopic","properties":{"connectionString":"` + cs + `"}}`,
			eventgrid.Destination{EndpointType: eventgrid.ServiceBusTopic, ConnectionString: cs}},
	}
	for _, tt := range tests {
		sub, err := resource.DecodeSubscription([]byte(`{"properties":{"destination":`+tt.body+`}}`), "t", "s")
		if err != nil {
			t.Errorf("%s: %v", tt.body, err)
			continue
		}
		if d := sub.Destination; d.EndpointType != tt.want.EndpointType || d.OutputName != tt.want.OutputName ||
			d.ConnectionString != tt.want.ConnectionString || d.MaxEventsPerBatch != tt.want.MaxEventsPerBatch {
			t.Errorf("%s: got %+v", tt.body, d)
		}
	}
}

func TestEncodeBrokerDestinations(t *testing.T) {
	const secret = "c2VjcmV0LWtleQ=="
	sub := &eventgrid.EventSubscription{Topic: "t", Name: "s", Destination: eventgrid.Destination{
		EndpointType:     eventgrid.ServiceBusQueue,
		ConnectionString: "Endpoint=sb://ns/;SharedAccessKeyName=k;SharedAccessKey=" + secret + ";EntityPath=q",
	}}
	b, err := json.Marshal(resource.NewSubscription(sub, "/x"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || strings.Contains(string(b), "connectionString") {
		t.Fatalf("the connection string is returned: %s", b)
	}
	sub.Destination = eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "out1"}
	b, _ = json.Marshal(resource.NewSubscription(sub, "/x"))
	if !strings.Contains(string(b), `"destination":{"endpointType":"EdgeHub","properties":{"outputName":"out1"}}`) {
		t.Fatalf("got %s", b)
	}
}
