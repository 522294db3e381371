package resource_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// Secrets of the stored subscriptions below: none may appear in what GET
// returns.
const (
	urlKey      = "c29tZS1mdW5jdGlvbi1rZXk"
	sasKey      = "ZXZlbnQtZ3JpZC1rZXk="
	entityKey   = "ZW50aXR5LWtleQ=="
	accountKey  = "YWNjb3VudC1rZXk="
	headerValue = "Bearer c2VjcmV0LXRva2Vu"
)

const (
	entityCS  = "Endpoint=sb://ns1.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=" + entityKey + ";EntityPath=orders"
	storageCS = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + accountKey +
		";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1"
)

var secretHeader = eventgrid.DeliveryAttribute{Name: "Authorization", Type: "Static", Value: headerValue, IsSecret: true}

// storedKinds returns a subscription of every destination kind, each with
// every secret it can have.
func storedKinds() map[string]*eventgrid.EventSubscription {
	sub := func(d eventgrid.Destination) *eventgrid.EventSubscription {
		return &eventgrid.EventSubscription{Topic: "t", Name: "s", EventDeliverySchema: eventgrid.EventGridSchema, Destination: d}
	}
	dynamic := eventgrid.DeliveryAttribute{Name: "x-device", Type: "Dynamic", SourceField: "data.device"}
	plain := eventgrid.DeliveryAttribute{Name: "x-plain", Type: "Static", Value: "shown"}
	never := -1
	m := map[string]*eventgrid.EventSubscription{
		"WebHook": sub(eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://fn.example/api/x?code=" + urlKey + "&clientId=default",
			SigningSecrets: []string{testSecret}, MaxEventsPerBatch: 5,
			DeliveryAttributes: []eventgrid.DeliveryAttribute{secretHeader, dynamic, plain}}),
		"EventGrid": sub(eventgrid.Destination{EndpointType: eventgrid.EventGrid, EndpointURL: "https://t1.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01",
			SASKey: sasKey, TopicName: "domainTopic", DeliveryAttributes: []eventgrid.DeliveryAttribute{secretHeader}}),
		"EdgeHub":         sub(eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "out1", DeliveryAttributes: []eventgrid.DeliveryAttribute{secretHeader}}),
		"EventHub":        sub(eventgrid.Destination{EndpointType: eventgrid.EventHub, ConnectionString: entityCS, DeliveryAttributes: []eventgrid.DeliveryAttribute{secretHeader}}),
		"ServiceBusQueue": sub(eventgrid.Destination{EndpointType: eventgrid.ServiceBusQueue, ConnectionString: entityCS}),
		"ServiceBusTopic": sub(eventgrid.Destination{EndpointType: eventgrid.ServiceBusTopic, ConnectionString: entityCS}),
		"StorageQueue":    sub(eventgrid.Destination{EndpointType: eventgrid.StorageQueue, ConnectionString: storageCS, QueueName: "events", QueueMessageTTLSeconds: &never}),
		"Queue": {Topic: "t", Name: "s", EventDeliverySchema: eventgrid.CloudEventSchemaV1_0, Queue: &eventgrid.QueueConfig{
			ReceiveLockSeconds: 60, MaxDeliveryCount: 10, EventTimeToLive: eventgrid.DefaultQueueEventTTL}},
	}
	m["WebHook"].DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob, ContainerName: "dead", ConnectionString: storageCS}
	m["Queue"].DeadLetter = &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob, ContainerName: "dead", ConnectionString: storageCS}
	return m
}

// get returns what GET returns for s.
func get(t *testing.T, s *eventgrid.EventSubscription) []byte {
	t.Helper()
	b, err := json.Marshal(resource.NewSubscription(s, prefix))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A PUT of exactly what GET returned is accepted and changes nothing: the
// secrets GET leaves out are kept. GET shows none of them, but shows what
// each destination targets.
func TestSecrets_GetPutRoundTrip(t *testing.T) {
	shown := map[string][]string{
		"WebHook":         {`"endpointBaseUrl":"https://fn.example/api/x"`, `"accountName":"devstoreaccount1"`, `"blobEndpoint":"http://127.0.0.1:10000/devstoreaccount1"`, `"blobContainerName":"dead"`},
		"EventGrid":       {`"endpointBaseUrl":"https://t1.westus-1.eventgrid.azure.net/api/events"`, `"topicName":"domainTopic"`},
		"EdgeHub":         {`"outputName":"out1"`},
		"EventHub":        {`"namespace":"ns1.servicebus.windows.net"`, `"entityPath":"orders"`},
		"ServiceBusQueue": {`"namespace":"ns1.servicebus.windows.net"`, `"entityPath":"orders"`},
		"ServiceBusTopic": {`"namespace":"ns1.servicebus.windows.net"`, `"entityPath":"orders"`},
		"StorageQueue":    {`"accountName":"devstoreaccount1"`, `"queueEndpoint":"http://127.0.0.1:10001/devstoreaccount1"`, `"queueName":"events"`},
		"Queue":           {`"accountName":"devstoreaccount1"`, `"blobContainerName":"dead"`},
	}
	for kind, stored := range storedKinds() {
		t.Run(kind, func(t *testing.T) {
			body := get(t, stored)
			for _, secret := range []string{urlKey, sasKey, entityKey, accountKey, headerValue, testSecret, "connectionString", "signingSecret", "sasKey"} {
				if strings.Contains(string(body), secret) {
					t.Errorf("GET shows %q: %s", secret, body)
				}
			}
			for _, s := range shown[kind] {
				if !strings.Contains(string(body), s) {
					t.Errorf("GET does not show %s: %s", s, body)
				}
			}
			got, err := resource.DecodeSubscriptionUpdate(body, "t", "s", stored)
			if err != nil {
				t.Fatalf("PUT of GET %s: %v", body, err)
			}
			if !reflect.DeepEqual(&got, stored) {
				t.Errorf("PUT of GET changed the subscription\n got %+v\nwant %+v", got, *stored)
			}
		})
	}
}

// What a PUT gives replaces what is stored; a read-only member that does
// not match what is stored, or a stand-in with nothing stored behind it,
// is refused; a secret is not carried to a destination other than its own.
func TestSecrets_Replace(t *testing.T) {
	kinds := storedKinds()
	hook, eg, eh, dl := kinds["WebHook"], kinds["EventGrid"], kinds["EventHub"], kinds["WebHook"]
	put := func(t *testing.T, stored *eventgrid.EventSubscription, edit func(string) string) (eventgrid.EventSubscription, error) {
		t.Helper()
		return resource.DecodeSubscriptionUpdate([]byte(edit(string(get(t, stored)))), "t", "s", stored)
	}
	replace := func(old, new string) func(string) string {
		return func(s string) string { return strings.Replace(s, old, new, 1) }
	}

	t.Run("NewURL", func(t *testing.T) {
		_, err := put(t, hook, replace(`"endpointBaseUrl":"https://fn.example/api/x"`, `"endpointUrl":"https://fn.example/api/x?code=new"`))
		mustCode(t, err, eventgrid.EInvalidDestination,
			`deliveryAttributeMappings[0].properties.value is required for a Static mapping: there is no stored secret value of "Authorization" for this destination to keep.`)
		got, err := put(t, hook, func(s string) string {
			s = replace(`"endpointBaseUrl":"https://fn.example/api/x"`, `"endpointUrl":"https://fn.example/api/x?code=new"`)(s)
			return replace(`"isSecret":true`, `"isSecret":true,"value":"Bearer bmV3"`)(s)
		})
		if err != nil || got.Destination.EndpointURL != "https://fn.example/api/x?code=new" || got.Destination.DeliveryAttributes[0].Value != "Bearer bmV3" {
			t.Fatalf("got %+v, %v", got.Destination, err)
		}
		if got.Destination.SigningSecrets != nil {
			t.Errorf("signing secrets carried to a new URL: %+v", got.Destination)
		}
	})
	t.Run("NewURLWithSecrets", func(t *testing.T) {
		got, err := put(t, eg, func(s string) string {
			s = replace(`"endpointBaseUrl":"https://t1.westus-1.eventgrid.azure.net/api/events"`,
				`"endpointUrl":"https://t2.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01","sasKey":"bmV3"`)(s)
			return replace(`"isSecret":true`, `"isSecret":true,"value":"v"`)(s)
		})
		if err != nil || got.Destination.SASKey != "bmV3" || !strings.HasPrefix(got.Destination.EndpointURL, "https://t2.") {
			t.Fatalf("got %+v, %v", got.Destination, err)
		}
	})
	t.Run("NewURLWithoutKey", func(t *testing.T) {
		got, err := put(t, eg, func(s string) string {
			s = replace(`"endpointBaseUrl":"https://t1.westus-1.eventgrid.azure.net/api/events"`,
				`"endpointUrl":"https://t2.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01"`)(s)
			return replace(`"isSecret":true`, `"isSecret":true,"value":"v"`)(s)
		})
		if err != nil || got.Destination.SASKey != "" {
			t.Fatalf("the key went to a new URL: %+v, %v", got.Destination, err)
		}
	})
	t.Run("SameURLGiven", func(t *testing.T) {
		got, err := put(t, eg, replace(`"endpointBaseUrl":"https://t1.westus-1.eventgrid.azure.net/api/events"`, `"endpointUrl":"`+eg.Destination.EndpointURL+`"`))
		if err != nil || got.Destination.SASKey != sasKey {
			t.Fatalf("the key is not kept for the same URL: %+v, %v", got.Destination, err)
		}
	})
	t.Run("BaseURLChanged", func(t *testing.T) {
		_, err := put(t, hook, replace(`https://fn.example/api/x`, `https://other.example/api/x`))
		mustCode(t, err, eventgrid.EInvalidDestination, "properties.destination.properties.endpointUrl is required: endpointBaseUrl is read-only")
	})
	t.Run("EntityChanged", func(t *testing.T) {
		_, err := put(t, eh, replace(`"entityPath":"orders"`, `"entityPath":"other"`))
		mustCode(t, err, eventgrid.EInvalidDestination, "properties.destination.properties.entityPath is read-only and differs from the stored connection string's")
	})
	t.Run("NewConnectionString", func(t *testing.T) {
		cs := strings.Replace(entityCS, "orders", "other", 1)
		got, err := put(t, eh, func(s string) string {
			s = replace(`"namespace":"ns1.servicebus.windows.net"`, `"connectionString":"`+cs+`"`)(s)
			return replace(`"isSecret":true`, `"isSecret":true,"value":"v"`)(s)
		})
		if err != nil || got.Destination.ConnectionString != cs {
			t.Fatalf("got %+v, %v", got.Destination, err)
		}
	})
	t.Run("OtherKind", func(t *testing.T) {
		_, err := put(t, eh, replace(`"EventHub"`, `"ServiceBusQueue"`))
		mustCode(t, err, eventgrid.EInvalidDestination, "connectionString is required", "names no stored connection string of this destination")
	})
	t.Run("DeadLetterAccountChanged", func(t *testing.T) {
		_, err := put(t, dl, replace(`"accountName":"devstoreaccount1"`, `"accountName":"other"`))
		mustCode(t, err, eventgrid.EInvalidDestination, "properties.deadLetterDestination.properties.accountName is read-only and differs")
	})
	t.Run("DeadLetterContainerChanged", func(t *testing.T) {
		got, err := put(t, dl, replace(`"blobContainerName":"dead"`, `"blobContainerName":"dead2"`))
		if err != nil || got.DeadLetter.ContainerName != "dead2" || got.DeadLetter.ConnectionString != storageCS {
			t.Fatalf("got %+v, %v", got.DeadLetter, err)
		}
	})
	t.Run("SigningRemovedWithNull", func(t *testing.T) {
		got, err := put(t, hook, replace(`"endpointBaseUrl"`, `"signingSecret":null,"endpointBaseUrl"`))
		if err != nil || got.Destination.SigningSecrets != nil || got.Destination.EndpointURL != hook.Destination.EndpointURL {
			t.Fatalf("got %+v, %v", got.Destination, err)
		}
	})
	t.Run("NothingStored", func(t *testing.T) {
		for kind, s := range storedKinds() {
			if kind == "EdgeHub" {
				continue // nothing in it stands for a secret but the header value
			}
			_, err := resource.DecodeSubscription(get(t, s), "t", "s")
			mustCode(t, err, eventgrid.EInvalidDestination, "is required")
		}
		_, err := resource.DecodeSubscription(get(t, kinds["EdgeHub"]), "t", "s")
		mustCode(t, err, eventgrid.EInvalidDestination, "deliveryAttributeMappings[0].properties.value is required for a Static mapping")
	})
}

func TestEndpointBaseURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://h/x", "https://h/x"},
		{"https://h:8443/api/x?code=k&x=1", "https://h:8443/api/x"},
		{"https://user:pass@h/x", "https://h/x"},
		{"https://h/x#frag", "https://h/x"},
		{"https://h/x?", "https://h/x"},
		{"https://h/a%2Fb?c=d", "https://h/a%2Fb"},
		{"::", ""},
	}
	for _, tt := range tests {
		if got := resource.EndpointBaseURL(tt.in); got != tt.want {
			t.Errorf("EndpointBaseURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
