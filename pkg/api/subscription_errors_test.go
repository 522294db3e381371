package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// dest returns subscription properties JSON with the given destination
// JSON and extra properties.
func dest(destination string, extra ...string) string {
	parts := append([]string{`"destination":` + destination}, extra...)
	return `{"properties":{` + strings.Join(parts, ",") + `}}`
}

// hookWith is a WebHook destination with extra destination properties.
func hookWith(extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"` + extra + `}}`
}

// egWith is an EventGrid destination with the given URL and extra
// destination properties.
func egWith(url, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"endpointType":"EventGrid","properties":{"endpointUrl":"` + url + `"` + extra + `}}`
}

// advanced returns subscription properties with one advanced filter.
func advanced(af string) string {
	return dest(hookWith(""), `"filter":{"advancedFilters":[`+af+`]}`)
}

func TestPutSubscription_Errors(t *testing.T) {
	lenient := MustOpenServer(t)
	strict := MustOpenServer(t, withRegistry(func(o *registry.Options) {
		o.WebhookHTTPSOnly, o.EventGridHTTPSOnly, o.EventGridAllowInvalidHostnames = true, true, false
	}))
	for _, ts := range []*testServer{lenient, strict} {
		ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
		ts.MustPutTopic(t, "c", eventgrid.CustomEventSchema)
	}
	many := func(n int, elem string) string {
		return strings.TrimSuffix(strings.Repeat(elem+",", n), ",")
	}
	tests := []struct {
		name   string
		strict bool
		topic  string
		ct     string
		body   string
		status int
		code   string
		parts  []string
	}{
		{name: "NoBody", body: ``, code: eventgrid.EInvalidDestination, parts: []string{"destination"}},
		{name: "NoProperties", body: `{"name":"s"}`, code: eventgrid.EInvalidDestination},
		{name: "MalformedJSON", body: `{"properties":{`, code: eventgrid.EInvalidJSON},
		{name: "BodyIsArray", body: `[` + dest(hookWith("")) + `]`, code: eventgrid.EInvalidJSON},
		{name: "PropertiesNotObject", body: `{"properties":"x"}`, code: eventgrid.EBadRequest, parts: []string{"properties"}},
		{name: "NameMismatch", body: `{"name":"other","properties":{"destination":` + hookWith("") + `}}`, code: eventgrid.EInvalidName, parts: []string{"other"}},
		{name: "TopicMismatch", body: dest(hookWith(""), `"topic":"c"`), code: eventgrid.ETopicNameMismatch, parts: []string{"topic"}},
		{name: "TopicNameMismatch", body: dest(hookWith(""), `"topicName":"other"`), code: eventgrid.ETopicNameMismatch, parts: []string{"topicName", "other"}},
		{name: "TopicNotString", body: dest(hookWith(""), `"topic":1`), code: eventgrid.ETopicNameMismatch},
		{name: "UnknownDeliverySchema", body: dest(hookWith(""), `"eventDeliverySchema":"Avro"`), code: eventgrid.EInvalidSchema, parts: []string{"Avro"}},
		{name: "DeliverySchemaNotTopics", body: dest(hookWith(""), `"eventDeliverySchema":"CustomEventSchema"`), code: eventgrid.EInvalidSchema, parts: []string{"EventGridSchema", "CustomEventSchema"}},
		{name: "DeliverySchemaNotTopicsInDestination", topic: "c", body: dest(hookWith(`"eventDeliverySchema":"EventGridSchema"`)), code: eventgrid.EInvalidSchema},
		{name: "PlainText", ct: "text/plain", body: dest(hookWith("")), status: http.StatusUnsupportedMediaType, code: eventgrid.EUnsupportedMedia},

		// Destinations.
		{name: "NoDestination", body: `{"properties":{"topic":"t"}}`, code: eventgrid.EInvalidDestination, parts: []string{"destination"}},
		{name: "DestinationNotObject", body: dest(`[]`), code: eventgrid.EInvalidDestination},
		{name: "NoEndpointType", body: dest(`{"properties":{"endpointUrl":"https://h"}}`), code: eventgrid.EInvalidDestination, parts: []string{"endpointType"}},
		{name: "UnknownEndpointType", body: dest(`{"endpointType":"Kafka","properties":{}}`), code: eventgrid.EInvalidDestination, parts: []string{"Kafka"}},
		{name: "EdgeHub", body: dest(`{"endpointType":"EdgeHub","properties":{"outputName":"o"}}`), code: eventgrid.EInvalidDestination, parts: []string{"EdgeHub", "IoT Edge runtime", "edgehub__mqttUrl"}},
		{name: "EventHub", body: dest(`{"endpointType":"eventHub","properties":{"connectionString":"Endpoint=sb://x/;EntityPath=h"}}`), code: eventgrid.EInvalidDestination, parts: []string{"properties.destination.properties.connectionString", "SharedAccessKeyName"}},
		{name: "ServiceBusQueue", body: dest(`{"endpointType":"serviceBusQueue","properties":{}}`), code: eventgrid.EInvalidDestination, parts: []string{"ServiceBusQueue", "connectionString is required"}},
		{name: "ServiceBusTopic", body: dest(`{"endpointType":"ServiceBusTopic","properties":{}}`), code: eventgrid.EInvalidDestination, parts: []string{"ServiceBusTopic", "connectionString is required"}},
		{name: "StorageQueueNoConnectionString", body: dest(`{"endpointType":"storagequeue","properties":{"queueName":"q"}}`), code: eventgrid.EInvalidDestination, parts: []string{"connectionString", "StorageQueue"}},
		{name: "NoEndpointURL", body: dest(`{"endpointType":"WebHook","properties":{}}`), code: eventgrid.EInvalidDestination, parts: []string{"endpointUrl", "required"}},
		{name: "NoDestinationProperties", body: dest(`{"endpointType":"WebHook"}`), code: eventgrid.EInvalidDestination, parts: []string{"endpointUrl"}},
		{name: "RelativeURL", body: dest(`{"endpointType":"WebHook","properties":{"endpointUrl":"/api/hook"}}`), code: eventgrid.EInvalidDestination, parts: []string{"absolute"}},
		{name: "NoHost", body: dest(`{"endpointType":"WebHook","properties":{"endpointUrl":"https:///x"}}`), code: eventgrid.EInvalidDestination},
		{name: "FTPURL", body: dest(`{"endpointType":"WebHook","properties":{"endpointUrl":"ftp://h/x"}}`), code: eventgrid.EInvalidDestination},
		{name: "EndpointURLNotString", body: dest(`{"endpointType":"WebHook","properties":{"endpointUrl":5}}`), code: eventgrid.EInvalidDestination},
		{name: "WebhookHTTPWhileHTTPSOnly", strict: true, body: dest(`{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x"}}`), code: eventgrid.EInvalidDestination, parts: []string{"https", "httpsOnly"}},
		{name: "EventGridHTTPWhileHTTPSOnly", strict: true, body: dest(egWith(strings.Replace(egURL, "https", "http", 1), `"sasKey":"k"`)), code: eventgrid.EInvalidDestination, parts: []string{"https"}},
		{name: "EventGridWrongPath", strict: true, body: dest(egWith("https://t.westus-1.eventgrid.azure.net/events?api-version=2018-01-01", `"sasKey":"k"`)), code: eventgrid.EInvalidDestination, parts: []string{"/api/events"}},
		{name: "EventGridNoAPIVersion", strict: true, body: dest(egWith("https://t.westus-1.eventgrid.azure.net/api/events", `"sasKey":"k"`)), code: eventgrid.EInvalidDestination, parts: []string{"api-version=2018-01-01"}},
		{name: "EventGridWrongAPIVersion", strict: true, body: dest(egWith("https://t.westus-1.eventgrid.azure.net/api/events?api-version=2019-01-01-preview", `"sasKey":"k"`)), code: eventgrid.EInvalidDestination, parts: []string{"api-version=2018-01-01"}},
		{name: "EventGridForeignHost", strict: true, body: dest(egWith("https://example.com/api/events?api-version=2018-01-01", `"sasKey":"k"`)), code: eventgrid.EInvalidDestination, parts: []string{"example.com", "allowInvalidHostnames"}},
		{name: "EventGridLookalikeHost", strict: true, body: dest(egWith("https://eventgrid.azure.net.evil.com/api/events?api-version=2018-01-01", `"sasKey":"k"`)), code: eventgrid.EInvalidDestination},
		{name: "EventGridNoSASKey", strict: true, body: dest(egWith(egURL, "")), code: eventgrid.EInvalidDestination, parts: []string{"sasKey"}},
		{name: "EventGridEmptySASKey", body: dest(egWith(egURL, `"sasKey":""`)), code: eventgrid.EInvalidDestination, parts: []string{"sasKey"}},

		// Retry policy.
		{name: "ZeroAttempts", body: dest(hookWith(""), `"retryPolicy":{"maxDeliveryAttempts":0}`), code: eventgrid.EInvalidRetryPolicy, parts: []string{"maxDeliveryAttempts"}},
		{name: "NegativeAttempts", body: dest(hookWith(""), `"retryPolicy":{"maxDeliveryAttempts":-1}`), code: eventgrid.EInvalidRetryPolicy},
		{name: "31Attempts", body: dest(hookWith(""), `"retryPolicy":{"maxDeliveryAttempts":31}`), code: eventgrid.EInvalidRetryPolicy,
			parts: []string{"maxDeliveryAttempts must be between 1 and 30 (api__retryPolicyLimits__maxDeliveryAttempts); got 31."}},
		{name: "FractionalAttempts", body: dest(hookWith(""), `"retryPolicy":{"maxDeliveryAttempts":1.5}`), code: eventgrid.EInvalidRetryPolicy},
		{name: "WordAttempts", body: dest(hookWith(""), `"retryPolicy":{"maxDeliveryAttempts":"ten"}`), code: eventgrid.EInvalidRetryPolicy},
		{name: "ZeroMinutes", body: dest(hookWith(""), `"retryPolicy":{"eventExpiryInMinutes":0}`), code: eventgrid.EInvalidRetryPolicy, parts: []string{"eventExpiryInMinutes"}},
		{name: "1441Minutes", body: dest(hookWith(""), `"retryPolicy":{"eventExpiryInMinutes":1441}`), code: eventgrid.EInvalidRetryPolicy, parts: []string{"1440", "1441"}},
		{name: "1441MinutesAlias", body: dest(hookWith(""), `"retryPolicy":{"eventTimeToLiveInMinutes":1441}`), code: eventgrid.EInvalidRetryPolicy},
		{name: "RetryPolicyNotObject", body: dest(hookWith(""), `"retryPolicy":[1]`), code: eventgrid.EInvalidRetryPolicy},

		// Batching.
		{name: "51Events", body: dest(hookWith(`"maxEventsPerBatch":51`)), code: eventgrid.EInvalidDelivery, parts: []string{"maxEventsPerBatch", "50"}},
		{name: "ZeroEvents", body: dest(hookWith(`"maxEventsPerBatch":0`)), code: eventgrid.EInvalidDelivery},
		{name: "1034KB", body: dest(hookWith(`"preferredBatchSizeInKilobytes":1034`)), code: eventgrid.EInvalidDelivery, parts: []string{"preferredBatchSizeInKilobytes", "1033"}},
		{name: "EventGrid1034KB", body: dest(egWith(egURL, `"sasKey":"k","preferredBatchSizeInKilobytes":1034`)), code: eventgrid.EInvalidDelivery},
		{name: "Legacy51Events", body: dest(hookWith(""), `"deliveryPolicy":{"maxEventsPerBatch":51}`), code: eventgrid.EInvalidDelivery},
		{name: "LegacyTooManyBytes", body: dest(hookWith(""), `"deliveryPolicy":{"approxBatchSizeInBytes":1059840}`), code: eventgrid.EInvalidDelivery},
		{name: "LegacyZeroBytes", body: dest(hookWith(""), `"deliveryPolicy":{"approxBatchSizeInBytes":0}`), code: eventgrid.EInvalidDelivery},

		// Persistence.
		{name: "PersistedString", body: dest(hookWith(""), `"persistencePolicy":"true"`), code: eventgrid.EInvalidPersistence, parts: []string{"memory"}},
		{name: "PersistedStringInObject", body: dest(hookWith(""), `"persistencePolicy":{"isPersisted":"true"}`), code: eventgrid.EInvalidPersistence, parts: []string{"memory"}},
		{name: "PersistedBool", body: dest(hookWith(""), `"PersistencePolicy":{"IsPersisted":true}`), code: eventgrid.EInvalidPersistence, parts: []string{"memory"}},
		{name: "PersistedBareBool", body: dest(hookWith(""), `"persistencePolicy":true`), code: eventgrid.EInvalidPersistence},
		{name: "PersistenceBadShape", body: dest(hookWith(""), `"persistencePolicy":5`), code: eventgrid.EInvalidPersistence},
		{name: "PersistenceBadValue", body: dest(hookWith(""), `"persistencePolicy":{"isPersisted":"yes"}`), code: eventgrid.EInvalidPersistence},

		// Filters.
		{name: "FilterNotObject", body: dest(hookWith(""), `"filter":"x"`), code: eventgrid.EInvalidFilter},
		{name: "EventTypesNotArray", body: dest(hookWith(""), `"filter":{"includedEventTypes":"a"}`), code: eventgrid.EInvalidFilter, parts: []string{"includedEventTypes"}},
		{name: "EventTypeNotString", body: dest(hookWith(""), `"filter":{"includedEventTypes":[1]}`), code: eventgrid.EInvalidFilter},
		{name: "SubjectNotString", body: dest(hookWith(""), `"filter":{"subjectBeginsWith":1}`), code: eventgrid.EInvalidFilter},
		{name: "CaseSensitiveNotBool", body: dest(hookWith(""), `"filter":{"isSubjectCaseSensitive":"maybe"}`), code: eventgrid.EInvalidFilter},
		{name: "AdvancedFiltersNotArray", body: dest(hookWith(""), `"filter":{"advancedFilters":"[{"}`), code: eventgrid.EInvalidFilter, parts: []string{"advancedFilters"}},
		{name: "UnknownOperator", body: advanced(`{"operatorType":"Foo","key":"data.x","value":1}`), code: eventgrid.EInvalidFilter, parts: []string{"Foo"}},
		{name: "RangeReversed", body: advanced(`{"operatorType":"NumberInRange","key":"data.x","values":[[10, 1]]}`), code: eventgrid.EInvalidFilter, parts: []string{"NumberInRange", "values[0]", "low bound"}},
		{name: "NullOperatorWithValue", body: advanced(`{"operatorType":"IsNotNull","key":"data.x","value":1}`), code: eventgrid.EInvalidFilter, parts: []string{"takes no value"}},
		{name: "NoOperator", body: advanced(`{"key":"data.x","value":1}`), code: eventgrid.EInvalidFilter, parts: []string{"operatorType"}},
		{name: "NoKey", body: advanced(`{"operatorType":"NumberIn","values":[1]}`), code: eventgrid.EInvalidFilter, parts: []string{"key"}},
		{name: "NumberValueIsString", body: advanced(`{"operatorType":"NumberGreaterThan","key":"data.x","value":"a"}`), code: eventgrid.EInvalidFilter},
		{name: "NumberInStrings", body: advanced(`{"operatorType":"NumberIn","key":"data.x","values":["a"]}`), code: eventgrid.EInvalidFilter},
		{name: "BoolEqualsNumber", body: advanced(`{"operatorType":"BoolEquals","key":"data.x","value":1}`), code: eventgrid.EInvalidFilter},
		{name: "StringInNumbers", body: advanced(`{"operatorType":"StringIn","key":"data.x","values":[1]}`), code: eventgrid.EInvalidFilter},
		{name: "ValuesNotArray", body: advanced(`{"operatorType":"StringIn","key":"data.x","values":{}}`), code: eventgrid.EInvalidFilter},
		{name: "UnknownEnvelopeKey", body: advanced(`{"operatorType":"StringIn","key":"nope","values":["a"]}`), code: eventgrid.EInvalidFilter},
		{name: "26Filters", body: dest(hookWith(""), `"filter":{"advancedFilters":[`+many(26, `{"operatorType":"BoolEquals","key":"data.b","value":true}`)+`]}`), code: eventgrid.EInvalidFilter, parts: []string{"25"}},
		{name: "26Values", body: advanced(`{"operatorType":"NumberIn","key":"data.n","values":[` + many(26, "1") + `]}`), code: eventgrid.EInvalidFilter, parts: []string{"25"}},
		{name: "513Characters", body: advanced(`{"operatorType":"StringIn","key":"data.s","values":["` + strings.Repeat("x", 513) + `"]}`), code: eventgrid.EInvalidFilter, parts: []string{"512"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := lenient
			if tt.strict {
				ts = strict
			}
			topic, ct, status := tt.topic, tt.ct, tt.status
			if topic == "" {
				topic = "t"
			}
			if ct == "" {
				ct = ctJSON
			}
			if status == 0 {
				status = http.StatusBadRequest
			}
			r := ts.do(t, http.MethodPut, "/topics/"+topic+"/eventSubscriptions/s", ct, tt.body)
			mustErrorContaining(t, r, status, tt.code, tt.parts...)
			if _, err := ts.Registry.Subscription(t.Context(), topic, "s"); eventgrid.ErrorCode(err) != eventgrid.ESubscriptionMissing {
				t.Errorf("a refused PUT stored the subscription (err %v)", err)
			}
		})
	}
	if n := len(lenient.Observer.Changes()) + len(strict.Observer.Changes()); n != 0 {
		t.Errorf("observer saw %d changes from refused PUTs", n)
	}
}

func TestPutSubscription_AllowedByOptions(t *testing.T) {
	ts := MustOpenServer(t, withRegistry(func(o *registry.Options) {
		o.WebhookHTTPSOnly, o.EventGridHTTPSOnly, o.EventGridAllowInvalidHostnames = false, false, true
	}))
	ts.MustPutTopic(t, "t", "")
	tests := []struct{ name, body string }{
		{"WebhookHTTP", dest(`{"endpointType":"WebHook","properties":{"endpointUrl":"http://h/x"}}`)},
		{"EventGridHTTP", dest(egWith("http://t.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01", `"sasKey":"k"`))},
		{"EventGridAnyHost", dest(egWith("https://127.0.0.1:8443/api/events?api-version=2018-01-01", `"sasKey":"k"`))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.MustPutSubscription(t, "t", "s", tt.body)
		})
	}
	t.Run("PathStillChecked", func(t *testing.T) {
		r := ts.do(t, http.MethodPut, "/topics/t/eventSubscriptions/s", ctJSON, dest(egWith("https://127.0.0.1/x?api-version=2018-01-01", `"sasKey":"k"`)))
		mustError(t, r, http.StatusBadRequest, eventgrid.EInvalidDestination)
	})
}

func TestSubscriptions_Missing(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", "")
	tests := []struct {
		name, method, path string
		body               any
		code               string
	}{
		{"PutOnMissingTopic", http.MethodPut, "/topics/nope/eventSubscriptions/s", webhook(nil), eventgrid.ETopicNotFound},
		{"GetOnMissingTopic", http.MethodGet, "/topics/nope/eventSubscriptions/s", nil, eventgrid.ETopicNotFound},
		{"ListOnMissingTopic", http.MethodGet, "/topics/nope/eventSubscriptions", nil, eventgrid.ETopicNotFound},
		{"DeleteOnMissingTopic", http.MethodDelete, "/topics/nope/eventSubscriptions/s", nil, eventgrid.ETopicNotFound},
		{"GetMissing", http.MethodGet, "/topics/t/eventSubscriptions/nope", nil, eventgrid.ESubscriptionMissing},
		{"DeleteMissing", http.MethodDelete, "/topics/t/eventSubscriptions/nope", nil, eventgrid.ESubscriptionMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := ""
			if tt.body != nil {
				ct = ctJSON
			}
			mustErrorContaining(t, ts.do(t, tt.method, tt.path, ct, tt.body), http.StatusNotFound, tt.code, "nope")
		})
	}
	t.Run("DeleteTwice", func(t *testing.T) {
		ts.MustPutSubscription(t, "t", "s", webhook(nil))
		mustStatus(t, ts.do(t, http.MethodDelete, "/topics/t/eventSubscriptions/S", "", nil), http.StatusOK)
		mustError(t, ts.do(t, http.MethodDelete, "/topics/t/eventSubscriptions/s", "", nil), http.StatusNotFound, eventgrid.ESubscriptionMissing)
	})
}

func TestPutSubscription_MaxPerTopic(t *testing.T) {
	ts := MustOpenServer(t, withRegistry(func(o *registry.Options) { o.MaxSubscriptionsPerTopic = 1 }))
	ts.MustPutTopic(t, "t", "")
	ts.MustPutTopic(t, "u", "")
	ts.MustPutSubscription(t, "t", "a", webhook(nil))
	ts.MustPutSubscription(t, "t", "A", webhook(nil)) // an update
	r := ts.do(t, http.MethodPut, "/topics/t/eventSubscriptions/b", ctJSON, webhook(nil))
	mustError(t, r, http.StatusBadRequest, eventgrid.ELimitExceeded)
	ts.MustPutSubscription(t, "u", "b", webhook(nil)) // the limit is per topic
}
