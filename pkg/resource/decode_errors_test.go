package resource_test

import (
	"reflect"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

func TestDecodeSubscription_Errors(t *testing.T) {
	tests := []struct {
		name, body, code string
		parts            []string
	}{
		{"Empty", ``, eventgrid.EInvalidDestination, []string{"properties.destination"}},
		{"NoProperties", `{}`, eventgrid.EInvalidDestination, nil},
		{"Malformed", `{"properties":}`, eventgrid.EInvalidJSON, nil},
		{"NotObject", `"x"`, eventgrid.EInvalidJSON, nil},
		{"NameMismatch", `{"name":"x","properties":{` + hookJSON + `}}`, eventgrid.EInvalidName, []string{`"x"`}},
		{"TopicMismatch", `{"properties":{"topic":"u",` + hookJSON + `}}`, eventgrid.ETopicNameMismatch, []string{"properties.topic", `"u"`}},
		{"TopicNameMismatch", `{"properties":{"TopicName":"u",` + hookJSON + `}}`, eventgrid.ETopicNameMismatch, []string{"topicName"}},
		{"TopicNotString", `{"properties":{"topic":[],` + hookJSON + `}}`, eventgrid.ETopicNameMismatch, nil},
		{"NoDestination", `{"properties":{}}`, eventgrid.EInvalidDestination, []string{"properties.destination"}},
		{"DestinationNotObject", `{"properties":{"destination":1}}`, eventgrid.EInvalidDestination, nil},
		{"NoEndpointType", `{"properties":{"destination":{}}}`, eventgrid.EInvalidDestination, []string{"properties.destination.endpointType"}},
		{"UnknownEndpointType", `{"properties":{"destination":{"endpointType":"Kafka"}}}`, eventgrid.EInvalidDestination, []string{"Kafka"}},
		{"OutputNameNotString", `{"properties":{"destination":{"endpointType":"edgehub","properties":{"outputName":1}}}}`, eventgrid.EInvalidDestination, []string{"properties.destination.properties.outputName"}},
		{"ConnectionStringNotString", `{"properties":{"destination":{"endpointType":"serviceBusQueue","properties":{"connectionString":{}}}}}`, eventgrid.EInvalidDestination, []string{"properties.destination.properties.connectionString"}},
		{"DestinationPropertiesNotObject", `{"properties":{"destination":{"endpointType":"WebHook","properties":[]}}}`, eventgrid.EInvalidDestination, []string{"properties.destination.properties"}},
		{"EndpointURLNotString", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":1}}}}`, eventgrid.EInvalidDestination, []string{"endpointUrl"}},
		{"SASKeyNotString", `{"properties":{"destination":{"endpointType":"EventGrid","properties":{"sasKey":1}}}}`, eventgrid.EInvalidDestination, []string{"sasKey"}},
		{"ZeroEventsPerBatch", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"maxEventsPerBatch":0}}}}`, eventgrid.EInvalidDelivery, []string{"maxEventsPerBatch"}},
		{"FractionalKB", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"preferredBatchSizeInKilobytes":1.5}}}}`, eventgrid.EInvalidDelivery, nil},
		{"BadDeliverySchema", `{"properties":{"eventDeliverySchema":"x",` + hookJSON + `}}`, eventgrid.EInvalidSchema, []string{"properties.eventDeliverySchema"}},
		{"BadDeliverySchemaInDestination", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"eventDeliverySchema":"x"}}}}`, eventgrid.EInvalidSchema, []string{"properties.destination.properties.eventDeliverySchema"}},
		{"DeliveryPolicyNotObject", `{"properties":{` + hookJSON + `,"deliveryPolicy":1}}`, eventgrid.EInvalidDelivery, nil},
		{"LegacyNegative", `{"properties":{` + hookJSON + `,"deliveryPolicy":{"maxEventsPerBatch":-1}}}`, eventgrid.EInvalidDelivery, nil},
		{"RetryNotObject", `{"properties":{` + hookJSON + `,"retryPolicy":true}}`, eventgrid.EInvalidRetryPolicy, nil},
		{"ZeroAttempts", `{"properties":{` + hookJSON + `,"retryPolicy":{"maxDeliveryAttempts":0}}}`, eventgrid.EInvalidRetryPolicy, []string{"properties.retryPolicy.maxDeliveryAttempts"}},
		{"AttemptsWord", `{"properties":{` + hookJSON + `,"retryPolicy":{"maxDeliveryAttempts":"x"}}}`, eventgrid.EInvalidRetryPolicy, nil},
		{"ZeroMinutesAlias", `{"properties":{` + hookJSON + `,"retryPolicy":{"eventTimeToLiveInMinutes":0}}}`, eventgrid.EInvalidRetryPolicy, []string{"eventTimeToLiveInMinutes"}},
		{"HugeAttempts", `{"properties":{` + hookJSON + `,"retryPolicy":{"maxDeliveryAttempts":1e400}}}`, eventgrid.EInvalidRetryPolicy, nil},
		{"PersistenceNumber", `{"properties":{` + hookJSON + `,"persistencePolicy":1}}`, eventgrid.EInvalidPersistence, []string{"persistencePolicy"}},
		{"PersistenceWord", `{"properties":{` + hookJSON + `,"persistencePolicy":"yes"}}`, eventgrid.EInvalidPersistence, nil},
		{"IsPersistedWord", `{"properties":{` + hookJSON + `,"persistencePolicy":{"isPersisted":"yes"}}}`, eventgrid.EInvalidPersistence, []string{"isPersisted"}},
		{"FilterNotObject", `{"properties":{` + hookJSON + `,"filter":[]}}`, eventgrid.EInvalidFilter, []string{"properties.filter"}},
		{"EventTypesNotArray", `{"properties":{` + hookJSON + `,"filter":{"includedEventTypes":{}}}}`, eventgrid.EInvalidFilter, nil},
		{"EventTypesBadJSONString", `{"properties":{` + hookJSON + `,"filter":{"includedEventTypes":"[\"a\""}}}`, eventgrid.EInvalidFilter, nil},
		{"EventTypeNotString", `{"properties":{` + hookJSON + `,"filter":{"includedEventTypes":["a",2]}}}`, eventgrid.EInvalidFilter, []string{"includedEventTypes[1]"}},
		{"SubjectNotString", `{"properties":{` + hookJSON + `,"filter":{"subjectEndsWith":false}}}`, eventgrid.EInvalidFilter, nil},
		{"CaseSensitiveWord", `{"properties":{` + hookJSON + `,"filter":{"isSubjectCaseSensitive":"no"}}}`, eventgrid.EInvalidFilter, nil},
		{"NoOperator", `{"properties":{` + hookJSON + `,"filter":{"advancedFilters":[{"key":"k"}]}}}`, eventgrid.EInvalidFilter, []string{"advancedFilters[0].operatorType"}},
		{"NoKey", `{"properties":{` + hookJSON + `,"filter":{"advancedFilters":[1,{"operatorType":"StringIn"}]}}}`, eventgrid.EInvalidFilter, []string{"advancedFilters[1].key"}},
		{"ValuesNotArray", `{"properties":{` + hookJSON + `,"filter":{"advancedFilters":[{"operatorType":"StringIn","key":"k","values":"a"}]}}}`, eventgrid.EInvalidFilter, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resource.DecodeSubscription([]byte(tt.body), "t", "s")
			mustCode(t, err, tt.code, tt.parts...)
		})
	}
}

// TestDecodeSubscriptionProperties covers the module-twin form, where the
// properties name their topic.
func TestDecodeSubscriptionProperties(t *testing.T) {
	tests := []struct {
		name, props, topic string
		wantTopic          string
		code               string
	}{
		{"TopicFromProperties", `{"topic":"a",` + hookJSON + `}`, "", "a", ""},
		{"TopicNameFromProperties", `{"topicName":"a",` + hookJSON + `}`, "", "a", ""},
		{"TopicGiven", `{` + hookJSON + `}`, "b", "b", ""},
		{"TopicMissing", `{` + hookJSON + `}`, "", "", eventgrid.ETopicNameMismatch},
		{"AsJSONString", `"{\"topic\":\"a\",\"destination\":{\"endpointType\":\"WebHook\",\"properties\":{\"endpointUrl\":\"https://h/x\"}}}"`, "", "a", ""},
		{"NotObject", `[]`, "", "", eventgrid.EBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resource.DecodeSubscriptionProperties([]byte(tt.props), "eventSubscriptions.s", tt.topic, "s")
			if tt.code != "" {
				mustCode(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatalf("DecodeSubscriptionProperties: %v", err)
			}
			if got.Topic != tt.wantTopic || got.Name != "s" || !reflect.DeepEqual(got.Destination, hook) {
				t.Errorf("got %+v", got)
			}
		})
	}
	t.Run("ErrorPathsUsePrefix", func(t *testing.T) {
		_, err := resource.DecodeSubscriptionProperties([]byte(`{"topic":"a","destination":{}}`), "eventSubscriptions.s", "", "s")
		mustCode(t, err, eventgrid.EInvalidDestination, "eventSubscriptions.s.destination.endpointType")
	})
}
