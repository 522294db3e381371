package resource_test

import (
	"encoding/json"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// A misspelt or misplaced member is refused, naming its path as written
// and the name it most likely meant, instead of being ignored.
func TestDecode_UnknownMembers(t *testing.T) {
	const hook = `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"}}`
	const cs = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=c2VjcmV0;EntityPath=q"
	tests := []struct {
		name, props, code, msg string
	}{
		{"FilterSubject", hook + `,"filter":{"subjectBeginWith":"/only/"}`, eventgrid.EUnknownMember,
			"properties.filter.subjectBeginWith is not a known member; did you mean subjectBeginsWith?"},
		{"FilterTypes", hook + `,"filter":{"includedEventType":["Only.This"]}`, eventgrid.EUnknownMember,
			"properties.filter.includedEventType is not a known member; did you mean includedEventTypes?"},
		{"RetryPolicy", hook + `,"retryPolicyy":{"maxDeliveryAttempts":3}`, eventgrid.EUnknownMember,
			"properties.retryPolicyy is not a known member; did you mean retryPolicy?"},
		{"Batch", `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","maxEventsPerBatchh":5}}`, eventgrid.EUnknownMember,
			"properties.destination.properties.maxEventsPerBatchh is not a known member; did you mean maxEventsPerBatch?"},
		{"PascalCaseTypo", `"Destination":{"EndpointType":"WebHook","Properties":{"EndpointUrl":"https://h/x","MaxEventPerBatch":5}}`, eventgrid.EUnknownMember,
			"properties.destination.properties.MaxEventPerBatch is not a known member; did you mean maxEventsPerBatch?"},
		{"AdvancedFilter", hook + `,"filter":{"advancedFilters":[{"operatorType":"NumberIn","key":"data.n","vaules":[1]}]}`, eventgrid.EUnknownMember,
			"properties.filter.advancedFilters[0].vaules is not a known member; did you mean values?"},
		{"NoSuggestion", hook + `,"colour":"blue"`, eventgrid.EUnknownMember,
			"properties.colour is not a known member; the members here are topic, topicName, eventDeliverySchema, destination,"},
		{"EscapedName", hook + `,"filter":{"subject\u0042eginWith":"/a/"}`, eventgrid.EUnknownMember,
			"properties.filter.subjectBeginWith is not a known member; did you mean subjectBeginsWith?"},
		{"RetryMember", hook + `,"retryPolicy":{"maxDeliveryAttempt":3}`, eventgrid.EUnknownMember, "did you mean maxDeliveryAttempts?"},
		{"Legacy", hook + `,"deliveryPolicy":{"approxBatchSizeInByte":1}`, eventgrid.EUnknownMember, "did you mean approxBatchSizeInBytes?"},
		{"Persistence", hook + `,"persistencePolicy":{"persisted":false}`, eventgrid.EUnknownMember, "properties.persistencePolicy.persisted"},
		{"Attribute", `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","deliveryAttributeMappings":[{"name":"x-a","typ":"Static"}]}}`,
			eventgrid.EUnknownMember, "deliveryAttributeMappings[0].typ is not a known member; did you mean type?"},
		{"DeadLetter", hook + `,"deadLetterDestination":{"endpointType":"StorageBlob","properties":{"containerName":"x"}}`, eventgrid.EUnknownMember,
			"properties.deadLetterDestination.properties.containerName"},
		{"Queue", `"deliveryConfiguration":{"deliveryMode":"Queue","queue":{"maxDeliveryCnt":3}}`, eventgrid.EUnknownMember,
			"properties.deliveryConfiguration.queue.maxDeliveryCnt is not a known member; did you mean maxDeliveryCount?"},
		{"FiltersConfiguration", `"deliveryConfiguration":{"deliveryMode":"Queue"},"filtersConfiguration":{"filter":[]}`, eventgrid.EUnknownMember,
			"did you mean filters?"},

		{"OtherKind", `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","sasKey":"k"}}`, eventgrid.EUnknownMember,
			"properties.destination.properties.sasKey is not a member here: it applies to EventGrid destinations, not WebHook."},
		{"OtherKinds", `"destination":{"endpointType":"EdgeHub","properties":{"outputName":"o","connectionString":"x"}}`, eventgrid.EUnknownMember,
			"it applies to EventHub, ServiceBusQueue, ServiceBusTopic and StorageQueue destinations, not EdgeHub."},
		{"URLOfEdgeHub", `"destination":{"endpointType":"EdgeHub","properties":{"outputName":"o","endpointUrl":"https://h"}}`, eventgrid.EUnknownMember,
			"it applies to EventGrid and WebHook destinations, not EdgeHub."},
		{"Misplaced", hook + `,"maxEventsPerBatch":5`, eventgrid.EUnknownMember,
			"properties.maxEventsPerBatch is not a member here: it belongs in properties.destination.properties."},
		{"StaticSource", `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","deliveryAttributeMappings":[{"name":"x-a","type":"Static","properties":{"value":"v","sourceField":"data.a"}}]}}`,
			eventgrid.EUnknownMember, "it applies to Dynamic mappings, not Static"},

		{"Expiration", hook + `,"expirationTimeUtc":"2030-01-01T00:00:00Z"`, eventgrid.ENotSupported,
			"properties.expirationTimeUtc is not supported here: subscriptions do not expire here"},
		{"Labels", hook + `,"labels":["a"]`, eventgrid.ENotSupported, "properties.labels is not supported here"},
		{"DeliveryIdentity", hook + `,"deliveryWithResourceIdentity":{}`, eventgrid.ENotSupported, "properties.deliveryWithResourceIdentity is not supported here: managed identities"},
		{"DeadLetterIdentity", hook + `,"deadLetterWithResourceIdentity":{"deadLetterDestination":{}}`, eventgrid.ENotSupported, "properties.deadLetterWithResourceIdentity is not supported here"},
		{"ResourceID", `"destination":{"endpointType":"EventHub","properties":{"resourceId":"/subscriptions/x"}}`, eventgrid.ENotSupported,
			"properties.destination.properties.resourceId is not supported here: a resourceId names an Azure resource"},
		{"ResourceIDWithConnection", `"destination":{"endpointType":"EventHub","properties":{"connectionString":"` + cs + `","resourceId":"/subscriptions/x"}}`, eventgrid.ENotSupported,
			"resourceId is not supported here"},
		{"Entra", `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","azureActiveDirectoryTenantId":"t"}}`, eventgrid.ENotSupported,
			"azureActiveDirectoryTenantId is not supported here"},
		{"Push", `"deliveryConfiguration":{"deliveryMode":"Push","push":{}}`, eventgrid.ENotSupported, "properties.deliveryConfiguration.push is not supported here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resource.DecodeSubscription([]byte(`{"properties":{`+tt.props+`}}`), "t", "s")
			mustCode(t, err, tt.code, tt.msg)
		})
	}
}

// Members GET returns are accepted and ignored; members of cloud Event
// Grid's API given as null ask for nothing, and are accepted too.
func TestDecode_ReadOnlyAndNullMembers(t *testing.T) {
	ok := []string{
		`{"id":"/x","name":"s","type":"Microsoft.EventGrid/eventSubscriptions","systemData":{"a":1},"properties":{"provisioningState":"Succeeded",` +
			`"deliveryStatus":{"ready":1},"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","endpointBaseUrl":"https://h/x"}}}}`,
		`{"properties":{"expirationTimeUtc":null,"labels":null,"deliveryWithResourceIdentity":null,"deadLetterWithResourceIdentity":null,` +
			`"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","azureActiveDirectoryTenantId":null,"resourceId":null}}}}`,
	}
	for _, body := range ok {
		if _, err := resource.DecodeSubscription([]byte(body), "t", "s"); err != nil {
			t.Errorf("DecodeSubscription(%s): %v", body, err)
		}
	}
}

func TestDecodeTopic_UnknownMembers(t *testing.T) {
	tests := []struct{ body, code, msg string }{
		{`{"properties":{"inputSchemma":"CustomEventSchema"}}`, eventgrid.EUnknownMember,
			"properties.inputSchemma is not a known member; did you mean inputSchema?"},
		{`{"propertie":{}}`, eventgrid.EUnknownMember, "propertie is not a known member; did you mean properties?"},
		{`{"location":"westus"}`, eventgrid.ENotSupported, "location is not supported here"},
		{`{"tags":{"a":"b"}}`, eventgrid.ENotSupported, "tags is not supported here"},
		{`{"properties":{"inputSchemaMapping":{}}}`, eventgrid.ENotSupported, "properties.inputSchemaMapping is not supported here"},
		{`{"properties":{"inboundIpRules":[]}}`, eventgrid.ENotSupported, "properties.inboundIpRules is not supported here"},
	}
	for _, tt := range tests {
		_, err := resource.DecodeTopic([]byte(tt.body), "t")
		mustCode(t, err, tt.code, tt.msg)
	}
	_, err := resource.DecodeTopicProperties([]byte(`{"inputschema":"x","inputSchemma":"y"}`), "topics.a", "a")
	mustCode(t, err, eventgrid.EUnknownMember, "topics.a.inputSchemma")
}

// What GET returns for a topic is accepted back as it is.
func TestDecodeTopic_RoundTrip(t *testing.T) {
	for _, schema := range []eventgrid.InputSchema{eventgrid.EventGridSchema, eventgrid.CustomEventSchema, eventgrid.CloudEventSchemaV1_0} {
		in := eventgrid.Topic{Name: "t", InputSchema: schema}
		b, err := json.Marshal(resource.NewTopic(in, "/iotHubs/h/devices/d/modules/m", "https://eventgridmodule:4438"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := resource.DecodeTopic(b, "t")
		if err != nil || got != in {
			t.Errorf("DecodeTopic(%s) = %+v, %v; want %+v", b, got, err, in)
		}
	}
}
