package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// egURL is a valid EventGrid destination URL.
const egURL = "https://t1.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01"

// TestPutSubscription_Shapes checks the liberal reading of subscription
// bodies and the camelCase response: each body must be accepted and its
// response's properties must be exactly want.
func TestPutSubscription_Shapes(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	ts.MustPutTopic(t, "c", eventgrid.CustomEventSchema)
	ts.MustPutTopic(t, "ce", eventgrid.CloudEventSchemaV1_0)
	const hook = `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x"}}`
	const hookOut = `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x"}}`
	tests := []struct {
		name, topic, body, want string
	}{
		{"Minimal", "t", `{"properties":{` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `}`},
		{"PascalCase", "t", `{"Name":"s","Properties":{"Topic":"t","EventDeliverySchema":"EventGridSchema",` +
			`"Destination":{"EndpointType":"WebHook","Properties":{"EndpointUrl":"https://h/x","MaxEventsPerBatch":10,"PreferredBatchSizeInKilobytes":64}},` +
			`"RetryPolicy":{"MaxDeliveryAttempts":5,"EventExpiryInMinutes":60},` +
			`"Filter":{"IncludedEventTypes":["a"],"SubjectBeginsWith":"/x","SubjectEndsWith":".jpg","IsSubjectCaseSensitive":true,` +
			`"AdvancedFilters":[{"OperatorType":"NumberIn","Key":"data.n","Values":[1,2.50]}]}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` +
				`"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","maxEventsPerBatch":10,"preferredBatchSizeInKilobytes":64}},` +
				`"retryPolicy":{"maxDeliveryAttempts":5,"eventExpiryInMinutes":60},` +
				`"filter":{"includedEventTypes":["a"],"subjectBeginsWith":"/x","subjectEndsWith":".jpg","isSubjectCaseSensitive":true,` +
				`"advancedFilters":[{"operatorType":"NumberIn","key":"data.n","values":[1,2.5]}]}}`},
		{"TopicOtherCase", "t", `{"properties":{"topic":"T",` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `}`},
		{"TopicNameAlias", "t", `{"properties":{"topicName":"t",` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `}`},
		{"NullsAreAbsent", "t", `{"name":null,"properties":{"topic":null,"retryPolicy":null,"filter":null,"persistencePolicy":null,` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `}`},
		{"TimeToLiveAlias", "t", `{"properties":{"retryPolicy":{"eventTimeToLiveInMinutes":30},` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"retryPolicy":{"eventExpiryInMinutes":30}}`},
		{"RetryAttemptsOnly", "t", `{"properties":{"retryPolicy":{"maxDeliveryAttempts":30},` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"retryPolicy":{"maxDeliveryAttempts":30}}`},
		{"RetryLimitsInclusive", "t", `{"properties":{"retryPolicy":{"maxDeliveryAttempts":1,"eventExpiryInMinutes":1440},` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"retryPolicy":{"maxDeliveryAttempts":1,"eventExpiryInMinutes":1440}}`},
		{"NumbersAtTheLimits", "t", `{"properties":{"retryPolicy":{"maxDeliveryAttempts":10,"eventExpiryInMinutes":1},` +
			`"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x","maxEventsPerBatch":50,"preferredBatchSizeInKilobytes":1033}}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema","destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x","maxEventsPerBatch":50,"preferredBatchSizeInKilobytes":1033}},` +
				`"retryPolicy":{"maxDeliveryAttempts":10,"eventExpiryInMinutes":1}}`},
		{"IntegralNumberForms", "t", `{"properties":{"retryPolicy":{"maxDeliveryAttempts":2.0e1,"eventExpiryInMinutes":60.0},` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"retryPolicy":{"maxDeliveryAttempts":20,"eventExpiryInMinutes":60}}`},
		{"PersistenceFalseString", "t", `{"properties":{"persistencePolicy":"false",` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"persistencePolicy":{"isPersisted":false}}`},
		{"PersistenceFalseStringInObject", "t", `{"properties":{"persistencePolicy":{"isPersisted":"False"},` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"persistencePolicy":{"isPersisted":false}}`},
		{"PersistenceFalseBool", "t", `{"properties":{"PersistencePolicy":{"IsPersisted":false},` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"persistencePolicy":{"isPersisted":false}}`},
		{"DeliverySchemaInDestination", "c", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x","eventDeliverySchema":"CustomSchema"}}}}`,
			`{"topic":"c","eventDeliverySchema":"CustomEventSchema",` + hookOut + `}`},
		{"DeliverySchemaAlias", "c", `{"properties":{"eventDeliverySchema":"customschema",` + hook + `}}`,
			`{"topic":"c","eventDeliverySchema":"CustomEventSchema",` + hookOut + `}`},
		{"DeliverySchemaFollowsTopic", "ce", `{"properties":{` + hook + `}}`,
			`{"topic":"ce","eventDeliverySchema":"CloudEventSchemaV1_0",` + hookOut + `}`},
		{"JSONStringArrays", "t", `{"properties":{` + hook + `,"filter":{"includedEventTypes":"[\"a\",\"b\"]",` +
			`"advancedFilters":"[{\"operatorType\":\"StringIn\",\"key\":\"subject\",\"values\":[\"x\"]}]"}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"filter":{"includedEventTypes":["a","b"],"isSubjectCaseSensitive":false,` +
				`"advancedFilters":[{"operatorType":"StringIn","key":"subject","values":["x"]}]}}`},
		{"EventTypesAlias", "t", `{"properties":{` + hook + `,"filter":{"eventTypes":["a"],"isSubjectCaseSensitive":"true"}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"filter":{"includedEventTypes":["a"],"isSubjectCaseSensitive":true}}`},
		{"OperatorCanonicalised", "t", `{"properties":{` + hook + `,"filter":{"advancedFilters":[1,"x",{"operatortype":"numbergreaterthan","KEY":"data.n","VALUE":4.560}]}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"filter":{"isSubjectCaseSensitive":false,` +
				`"advancedFilters":[{"operatorType":"NumberGreaterThan","key":"data.n","value":4.56}]}}`},
		{"EmptyFilter", "t", `{"properties":{` + hook + `,"filter":{}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"filter":{"isSubjectCaseSensitive":false}}`},
		{"CustomTopicIgnoresEventTypes", "c", `{"properties":{` + hook + `,"filter":{"includedEventTypes":["x"],"subjectBeginsWith":"/a"}}}`,
			`{"topic":"c","eventDeliverySchema":"CustomEventSchema",` + hookOut + `,"filter":{"includedEventTypes":["x"],"subjectBeginsWith":"/a","isSubjectCaseSensitive":false}}`},
		{"LegacyDeliveryPolicy", "t", `{"properties":{` + hook + `,"deliveryPolicy":{"approxBatchSizeInBytes":200000,"maxEventsPerBatch":25}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema","destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x","maxEventsPerBatch":25,"preferredBatchSizeInKilobytes":195}}}`},
		{"LegacyDeliveryPolicyYields", "t", `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x","maxEventsPerBatch":3,"preferredBatchSizeInKilobytes":7}},` +
			`"deliveryPolicy":{"approxBatchSizeInBytes":200000,"maxEventsPerBatch":25}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema","destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x","maxEventsPerBatch":3,"preferredBatchSizeInKilobytes":7}}}`},
		{"LegacyDeliveryPolicySmall", "t", `{"properties":{` + hook + `,"deliveryPolicy":{"approxBatchSizeInBytes":100}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema","destination":{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x","preferredBatchSizeInKilobytes":1}}}`},
		{"LowerCaseWebhook", "t", `{"properties":{"destination":{"endpointType":"webhook","properties":{"endpointUrl":"http://h/x"}}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `}`},
		{"EventGridSecretNotReturned", "t", `{"properties":{"destination":{"endpointType":"eventGrid","properties":{"endpointUrl":"` + egURL + `","sasKey":"s3cret","topicName":"domainTopic","maxEventsPerBatch":5}}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema","destination":{"endpointType":"EventGrid","properties":{"endpointBaseUrl":"https://t1.westus-1.eventgrid.azure.net/api/events","topicName":"domainTopic","maxEventsPerBatch":5}}}`},
		{"EventGridHostCaseAndUSCloud", "t", `{"properties":{"destination":{"endpointType":"EVENTGRID","properties":{"endpointUrl":"https://T.EASTUS.EventGrid.Azure.US/API/Events?api-version=2018-01-01","sasKey":"k"}}}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema","destination":{"endpointType":"EventGrid","properties":{"endpointBaseUrl":"https://T.EASTUS.EventGrid.Azure.US/API/Events"}}}`},
		{"ObjectAsJSONString", "t", `{"properties":{"retryPolicy":"{\"maxDeliveryAttempts\":3}",` + hook + `}}`,
			`{"topic":"t","eventDeliverySchema":"EventGridSchema",` + hookOut + `,"retryPolicy":{"maxDeliveryAttempts":3}}`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("s%d", i)
			body := strings.Replace(tt.body, `"Name":"s"`, `"Name":"`+name+`"`, 1)
			r := ts.do(t, http.MethodPut, "/topics/"+tt.topic+"/eventSubscriptions/"+name, "application/json; charset=utf-8", body)
			mustStatus(t, r, http.StatusOK)
			got := mustObject(t, r.Body)
			want := map[string]any{
				"id":         api.DefaultOptions().IDPrefix + "/topics/" + tt.topic + "/eventSubscriptions/" + name,
				"name":       name,
				"type":       "Microsoft.EventGrid/eventSubscriptions",
				"properties": mustObject(t, []byte(tt.want)),
			}
			if g, w := jsonText(t, got), jsonText(t, want); g != w {
				t.Errorf("response\n got %s\nwant %s", g, w)
			}
			if strings.Contains(strings.ToLower(string(r.Body)), "saskey") || strings.Contains(string(r.Body), "s3cret") {
				t.Errorf("response %s reveals the SAS key", r.Body)
			}
			r = ts.do(t, http.MethodGet, "/topics/"+tt.topic+"/eventSubscriptions/"+name, "", nil)
			mustStatus(t, r, http.StatusOK)
			if g, w := jsonText(t, mustObject(t, r.Body)), jsonText(t, want); g != w {
				t.Errorf("GET\n got %s\nwant %s", g, w)
			}
		})
	}
	t.Run("SASKeyStored", func(t *testing.T) {
		name := ""
		for i, tt := range tests {
			if tt.name == "EventGridSecretNotReturned" {
				name = fmt.Sprintf("s%d", i)
			}
		}
		sub, err := ts.Registry.Subscription(t.Context(), "t", name)
		if err != nil || sub.Destination.SASKey != "s3cret" {
			t.Errorf("stored subscription %s = %+v, %v; want SASKey s3cret", name, sub, err)
		}
	})
}
