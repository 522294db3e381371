package resource_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// mustCode fails tb unless err carries code and its message mentions each
// of parts.
func mustCode(tb testing.TB, err error, code string, parts ...string) {
	tb.Helper()
	if got := eventgrid.ErrorCode(err); got != code {
		tb.Fatalf("error = %v (code %s), want code %s", err, got, code)
	}
	for _, p := range parts {
		if !strings.Contains(eventgrid.ErrorMessage(err), p) {
			tb.Errorf("message %q does not mention %q", eventgrid.ErrorMessage(err), p)
		}
	}
}

func TestDecodeTopic(t *testing.T) {
	tests := []struct {
		name, body string
		want       eventgrid.InputSchema
		code       string
		parts      []string
	}{
		{name: "Empty", body: ``, want: eventgrid.EventGridSchema},
		{name: "Whitespace", body: " \n\t", want: eventgrid.EventGridSchema},
		{name: "EmptyObject", body: `{}`, want: eventgrid.EventGridSchema},
		{name: "Null", body: `null`, want: eventgrid.EventGridSchema},
		{name: "CamelCase", body: `{"name":"t","properties":{"inputSchema":"CloudEventSchemaV1_0"}}`, want: eventgrid.CloudEventSchemaV1_0},
		{name: "PascalCase", body: `{"Name":"T","Properties":{"InputSchema":"CustomEventSchema"}}`, want: eventgrid.CustomEventSchema},
		{name: "UpperCase", body: `{"NAME":"t","PROPERTIES":{"INPUTSCHEMA":"EVENTGRIDSCHEMA"}}`, want: eventgrid.EventGridSchema},
		{name: "CustomSchemaAlias", body: `{"properties":{"inputSchema":"CustomSchema"}}`, want: eventgrid.CustomEventSchema},
		{name: "SchemaWithSpaces", body: `{"properties":{"inputSchema":" customeventschema "}}`, want: eventgrid.CustomEventSchema},
		{name: "NullSchema", body: `{"properties":{"inputSchema":null}}`, want: eventgrid.EventGridSchema},
		{name: "PropertiesAsJSONString", body: `{"properties":"{\"inputSchema\":\"CustomSchema\"}"}`, want: eventgrid.CustomEventSchema},
		{name: "Malformed", body: `{"name":`, code: eventgrid.EInvalidJSON},
		// The position counts from the body as sent, white space before it
		// included.
		{name: "MalformedPosition", body: "\n{\"properties\": {\n  \"inputSchema\": 'CustomSchema'}}", code: eventgrid.EInvalidJSON,
			parts: []string{"The request body is not valid JSON: line 3, column 18: invalid character '\\'' looking for beginning of value", "not single quotes"}},
		{name: "TrailingCommaRefused", body: "{\"properties\": {\"inputSchema\": \"CustomSchema\",}}", code: eventgrid.EInvalidJSON,
			parts: []string{"line 1, column 47:", "remove the comma before '}'"}},
		{name: "MemberTwice", body: `{"properties":{"InputSchema":"Bogus","inputSchema":"CustomEventSchema"}}`, code: eventgrid.EInvalidJSON,
			parts: []string{"properties.inputSchema is given more than once"}},
		{name: "NotUTF8", body: "{\"name\":\"t\xff\"}", code: eventgrid.EInvalidJSON, parts: []string{"not valid UTF-8 text (at byte offset 10)"}},
		{name: "Array", body: `[{}]`, code: eventgrid.EInvalidJSON, parts: []string{"request body"}},
		{name: "NameMismatch", body: `{"name":"u"}`, code: eventgrid.EInvalidName, parts: []string{`"u"`, `"t"`}},
		{name: "NameNotString", body: `{"name":true}`, code: eventgrid.EInvalidName},
		{name: "PropertiesNotObject", body: `{"properties":1}`, code: eventgrid.EBadRequest, parts: []string{"properties"}},
		{name: "UnknownSchema", body: `{"properties":{"inputSchema":"Avro"}}`, code: eventgrid.EInvalidSchema, parts: []string{"properties.inputSchema", "Avro"}},
		{name: "SchemaNotString", body: `{"properties":{"inputSchema":{}}}`, code: eventgrid.EInvalidSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resource.DecodeTopic([]byte(tt.body), "t")
			if tt.code != "" {
				mustCode(t, err, tt.code, tt.parts...)
				return
			}
			if err != nil {
				t.Fatalf("DecodeTopic: %v", err)
			}
			if want := (eventgrid.Topic{Name: "t", InputSchema: tt.want}); got != want {
				t.Errorf("DecodeTopic = %+v, want %+v", got, want)
			}
		})
	}
}

func TestDecodeTopicProperties(t *testing.T) {
	got, err := resource.DecodeTopicProperties([]byte(`{"InputSchema":"CustomSchema"}`), "topics.a", "a")
	if err != nil || got != (eventgrid.Topic{Name: "a", InputSchema: eventgrid.CustomEventSchema}) {
		t.Errorf("DecodeTopicProperties = %+v, %v", got, err)
	}
	_, err = resource.DecodeTopicProperties([]byte(`{"inputSchema":"x"}`), "topics.a", "a")
	mustCode(t, err, eventgrid.EInvalidSchema, "topics.a.inputSchema")
}

// hook is the destination most subscription cases use.
var hook = eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://h/x"}

const hookJSON = `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"}}`

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestDecodeSubscription(t *testing.T) {
	tests := []struct {
		name, body string
		want       eventgrid.EventSubscription // Topic "t" and Name "s" are added
	}{
		{"Minimal", `{"properties":{` + hookJSON + `}}`, eventgrid.EventSubscription{Destination: hook}},
		{"PascalCase", `{"Name":"S","Properties":{"Topic":"T","EventDeliverySchema":"EventGridSchema",` +
			`"Destination":{"EndpointType":"webhook","Properties":{"EndpointUrl":"https://h/x","MaxEventsPerBatch":5,"PreferredBatchSizeInKilobytes":64}},` +
			`"RetryPolicy":{"MaxDeliveryAttempts":3,"EventExpiryInMinutes":9},"PersistencePolicy":{"IsPersisted":false},` +
			`"Filter":{"IncludedEventTypes":["a"],"SubjectBeginsWith":"/b","SubjectEndsWith":"e","IsSubjectCaseSensitive":true,` +
			`"AdvancedFilters":[{"OperatorType":"NumberIn","Key":"data.n","Values":[1, 2.50]}]}}}`,
			eventgrid.EventSubscription{
				EventDeliverySchema: eventgrid.EventGridSchema,
				Destination:         eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://h/x", MaxEventsPerBatch: 5, PreferredBatchSizeInKilobytes: 64},
				RetryPolicy:         &eventgrid.RetryPolicy{MaxDeliveryAttempts: 3, EventExpiryInMinutes: 9},
				PersistencePolicy:   &eventgrid.PersistencePolicy{},
				Filter: &eventgrid.Filter{IncludedEventTypes: []string{"a"}, SubjectBeginsWith: "/b", SubjectEndsWith: "e", IsSubjectCaseSensitive: true,
					AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "NumberIn", Key: "data.n", Values: []json.RawMessage{raw(`1`), raw(`2.50`)}}}},
			}},
		{"TopicName", `{"properties":{"topicName":"T",` + hookJSON + `}}`, eventgrid.EventSubscription{Destination: hook}},
		{"TimeToLive", `{"properties":{` + hookJSON + `,"retryPolicy":{"eventTimeToLiveInMinutes":15}}}`,
			eventgrid.EventSubscription{Destination: hook, RetryPolicy: &eventgrid.RetryPolicy{EventExpiryInMinutes: 15}}},
		{"ExpiryBeatsTimeToLive", `{"properties":{` + hookJSON + `,"retryPolicy":{"eventTimeToLiveInMinutes":15,"eventExpiryInMinutes":20}}}`,
			eventgrid.EventSubscription{Destination: hook, RetryPolicy: &eventgrid.RetryPolicy{EventExpiryInMinutes: 20}}},
		{"EmptyRetryPolicy", `{"properties":{` + hookJSON + `,"retryPolicy":{}}}`,
			eventgrid.EventSubscription{Destination: hook, RetryPolicy: &eventgrid.RetryPolicy{}}},
		{"PersistedString", `{"properties":{` + hookJSON + `,"persistencePolicy":"true"}}`,
			eventgrid.EventSubscription{Destination: hook, PersistencePolicy: &eventgrid.PersistencePolicy{IsPersisted: true}}},
		{"PersistedStringInObject", `{"properties":{` + hookJSON + `,"persistencePolicy":{"isPersisted":"TRUE"}}}`,
			eventgrid.EventSubscription{Destination: hook, PersistencePolicy: &eventgrid.PersistencePolicy{IsPersisted: true}}},
		{"PersistedBool", `{"properties":{` + hookJSON + `,"persistencePolicy":{"isPersisted":true}}}`,
			eventgrid.EventSubscription{Destination: hook, PersistencePolicy: &eventgrid.PersistencePolicy{IsPersisted: true}}},
		{"PersistedBareBool", `{"properties":{` + hookJSON + `,"persistencePolicy":false}}`,
			eventgrid.EventSubscription{Destination: hook, PersistencePolicy: &eventgrid.PersistencePolicy{}}},
		{"DeliverySchemaInDestination", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","eventDeliverySchema":"CloudEventSchemaV1_0"}}}}`,
			eventgrid.EventSubscription{Destination: hook, EventDeliverySchema: eventgrid.CloudEventSchemaV1_0}},
		{"TopLevelDeliverySchemaWins", `{"properties":{"eventDeliverySchema":"CustomSchema","destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","eventDeliverySchema":"CloudEventSchemaV1_0"}}}}`,
			eventgrid.EventSubscription{Destination: hook, EventDeliverySchema: eventgrid.CustomEventSchema}},
		{"JSONStringArrays", `{"properties":{` + hookJSON + `,"filter":{"includedEventTypes":"[\"a\",\"b\"]","advancedFilters":"[{\"operatorType\":\"BoolEquals\",\"key\":\"data.b\",\"value\":true}]"}}}`,
			eventgrid.EventSubscription{Destination: hook, Filter: &eventgrid.Filter{IncludedEventTypes: []string{"a", "b"},
				AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "BoolEquals", Key: "data.b", Value: raw(`true`)}}}}},
		{"EventTypesKey", `{"properties":{` + hookJSON + `,"filter":{"eventTypes":["x"]}}}`,
			eventgrid.EventSubscription{Destination: hook, Filter: &eventgrid.Filter{IncludedEventTypes: []string{"x"}}}},
		{"NonObjectFiltersSkipped", `{"properties":{` + hookJSON + `,"filter":{"advancedFilters":[null,1,"x",{"operatorType":"StringIn","key":"subject","values":["a"]}]}}}`,
			eventgrid.EventSubscription{Destination: hook, Filter: &eventgrid.Filter{
				AdvancedFilters: []eventgrid.AdvancedFilter{{OperatorType: "StringIn", Key: "subject", Values: []json.RawMessage{raw(`"a"`)}}}}}},
		{"LegacyDeliveryPolicy", `{"properties":{` + hookJSON + `,"deliveryPolicy":{"approxBatchSizeInBytes":200000,"maxEventsPerBatch":25}}}`,
			eventgrid.EventSubscription{Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://h/x", MaxEventsPerBatch: 25, PreferredBatchSizeInKilobytes: 195}}},
		{"LegacyDeliveryPolicyYields", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","maxEventsPerBatch":2}},"deliveryPolicy":{"maxEventsPerBatch":25,"approxBatchSizeInBytes":2048}}}`,
			eventgrid.EventSubscription{Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://h/x", MaxEventsPerBatch: 2, PreferredBatchSizeInKilobytes: 2}}},
		{"EventGrid", `{"properties":{"destination":{"endpointType":"EVENTGRID","properties":{"endpointUrl":"https://e/api/events","sasKey":"k","topicName":"d"}}}}`,
			eventgrid.EventSubscription{Destination: eventgrid.Destination{EndpointType: eventgrid.EventGrid, EndpointURL: "https://e/api/events", SASKey: "k", TopicName: "d"}}},
		{"NullsAbsent", `{"name":null,"properties":{"topic":null,"filter":null,"retryPolicy":null,"persistencePolicy":null,"deliveryPolicy":null,` + hookJSON + `}}`,
			eventgrid.EventSubscription{Destination: hook}},
		{"IntegralForms", `{"properties":{` + hookJSON + `,"retryPolicy":{"maxDeliveryAttempts":1e1,"eventExpiryInMinutes":2.0}}}`,
			eventgrid.EventSubscription{Destination: hook, RetryPolicy: &eventgrid.RetryPolicy{MaxDeliveryAttempts: 10, EventExpiryInMinutes: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resource.DecodeSubscription([]byte(tt.body), "t", "s")
			if err != nil {
				t.Fatalf("DecodeSubscription: %v", err)
			}
			want := tt.want
			want.Topic, want.Name = "t", "s"
			if !reflect.DeepEqual(got, want) {
				t.Errorf("DecodeSubscription\n got %+v\nwant %+v", describe(got), describe(want))
			}
		})
	}
}

// describe expands the pointers of s for failure messages.
func describe(s eventgrid.EventSubscription) string {
	b, _ := json.Marshal(s)
	return string(b)
}
