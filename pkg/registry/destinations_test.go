package registry_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

func TestRegistry_BrokerDestinations(t *testing.T) {
	edge, _ := MustNew(t, func(o *registry.Options) { o.EdgeHubAvailable = true })
	plain, _ := MustNew(t, nil)
	for _, r := range []*registry.Registry{edge, plain} {
		MustPutTopic(t, r, "t", eventgrid.EventGridSchema)
	}
	const secret = "c2VjcmV0LWtleQ=="
	const good = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=" + secret + ";EntityPath=hub"
	tests := []struct {
		name  string
		reg   *registry.Registry
		dst   eventgrid.Destination
		parts []string // in the error; none when valid
	}{
		{"EdgeHub", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "sampleSub4"}, nil},
		{"EdgeHubBatching", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "o", MaxEventsPerBatch: 10}, nil},
		{"EdgeHubOutsideIoTEdge", plain, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "o"},
			[]string{"IoT Edge runtime", "IOTEDGE_WORKLOADURI", "edgehub__mqttUrl"}},
		{"EdgeHubNoOutput", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub}, []string{"properties.destination.properties.outputName", "required"}},
		{"EdgeHubSlash", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "a/b"}, []string{"outputName"}},
		{"EdgeHubWildcard", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "a#"}, []string{"outputName"}},
		{"EdgeHubLong", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: strings.Repeat("o", 257)}, []string{"outputName"}},
		{"EdgeHubSystemProperty", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "o",
			DeliveryAttributes: []eventgrid.DeliveryAttribute{{Name: "$.ct", Type: "Static", Value: "x"}}}, []string{"deliveryAttributeMappings[0].name"}},
		{"EdgeHubSpacesAndWildcardsInProperties", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "out put",
			DeliveryAttributes: []eventgrid.DeliveryAttribute{{Name: "a+b", Type: "Static", Value: "#\x00 x"}}}, nil},
		{"EdgeHubTopicTooLong", edge, eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "o",
			DeliveryAttributes: []eventgrid.DeliveryAttribute{{Name: "big", Type: "Static", Value: strings.Repeat(" ", 30000)}}},
			[]string{"properties.destination.properties.deliveryAttributeMappings", "65535"}},
		{"EventHub", plain, eventgrid.Destination{EndpointType: eventgrid.EventHub, ConnectionString: good}, nil},
		{"ServiceBusQueue", plain, eventgrid.Destination{EndpointType: eventgrid.ServiceBusQueue, ConnectionString: good}, nil},
		{"ServiceBusTopic", plain, eventgrid.Destination{EndpointType: eventgrid.ServiceBusTopic, ConnectionString: good, MaxEventsPerBatch: 5}, nil},
		{"NoConnectionString", plain, eventgrid.Destination{EndpointType: eventgrid.EventHub}, []string{"properties.destination.properties.connectionString", "required"}},
		{"NamespaceScoped", plain, eventgrid.Destination{EndpointType: eventgrid.ServiceBusQueue, ConnectionString: strings.TrimSuffix(good, ";EntityPath=hub")},
			[]string{"properties.destination.properties.connectionString", "EntityPath"}},
		{"Malformed", plain, eventgrid.Destination{EndpointType: eventgrid.ServiceBusTopic, ConnectionString: "sb://" + secret},
			[]string{"properties.destination.properties.connectionString"}},
		{"TooManyEvents", plain, eventgrid.Destination{EndpointType: eventgrid.EventHub, ConnectionString: good, MaxEventsPerBatch: 51}, []string{"maxEventsPerBatch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := eventgrid.EventSubscription{Topic: "t", Name: "s", Destination: tt.dst}
			_, _, err := tt.reg.PutSubscription(t.Context(), sub)
			if tt.parts == nil {
				if err != nil {
					t.Fatalf("PutSubscription: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("PutSubscription accepted it")
			}
			code := eventgrid.EInvalidDestination
			if tt.name == "TooManyEvents" {
				code = eventgrid.EInvalidDelivery
			}
			mustCode(t, err, code)
			for _, p := range tt.parts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not mention %q", err, p)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows the key", err)
			}
		})
	}
}
