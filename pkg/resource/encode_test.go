package resource_test

import (
	"encoding/json"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

const prefix = "/iotHubs/h/devices/d/modules/m"

// MustMarshal encodes v or fails tb.
func MustMarshal(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("Marshal: %v", err)
	}
	return string(b)
}

func TestNewTopic(t *testing.T) {
	tests := []struct {
		name  string
		topic eventgrid.Topic
		base  string
		want  string
	}{
		{"HTTP", eventgrid.Topic{Name: "MyTopic", InputSchema: eventgrid.EventGridSchema}, "http://eventgridmodule:5888",
			`{"id":"` + prefix + `/topics/MyTopic","name":"MyTopic","type":"Microsoft.EventGrid/topics",` +
				`"properties":{"endpoint":"http://eventgridmodule:5888/topics/MyTopic/events?api-version=2019-01-01-preview","inputSchema":"EventGridSchema"}}`},
		{"HTTPS", eventgrid.Topic{Name: "c", InputSchema: eventgrid.CustomEventSchema}, "https://10.0.0.1:4438",
			`{"id":"` + prefix + `/topics/c","name":"c","type":"Microsoft.EventGrid/topics",` +
				`"properties":{"endpoint":"https://10.0.0.1:4438/topics/c/events?api-version=2019-01-01-preview","inputSchema":"CustomEventSchema"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MustMarshal(t, resource.NewTopic(tt.topic, prefix, tt.base)); got != tt.want {
				t.Errorf("NewTopic\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestNewSubscription(t *testing.T) {
	base := func() *eventgrid.EventSubscription {
		return &eventgrid.EventSubscription{
			UID: 7, Topic: "T", Name: "S", EventDeliverySchema: eventgrid.EventGridSchema,
			Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://h/x"},
		}
	}
	const head = `{"id":"` + prefix + `/topics/T/eventSubscriptions/S","name":"S","type":"Microsoft.EventGrid/eventSubscriptions","properties":{"topic":"T","eventDeliverySchema":"EventGridSchema",`
	tests := []struct {
		name string
		edit func(s *eventgrid.EventSubscription)
		want string
	}{
		{"Minimal", func(*eventgrid.EventSubscription) {},
			head + `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"}}}}`},
		{"Batching", func(s *eventgrid.EventSubscription) {
			s.Destination.MaxEventsPerBatch, s.Destination.PreferredBatchSizeInKilobytes = 10, 64
		}, head + `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x","maxEventsPerBatch":10,"preferredBatchSizeInKilobytes":64}}}}`},
		{"EventGridHidesKey", func(s *eventgrid.EventSubscription) {
			s.Destination = eventgrid.Destination{EndpointType: eventgrid.EventGrid, EndpointURL: "https://e/api/events", SASKey: "secret", TopicName: "d"}
		}, head + `"destination":{"endpointType":"EventGrid","properties":{"endpointUrl":"https://e/api/events","topicName":"d"}}}}`},
		{"SuppliedParts", func(s *eventgrid.EventSubscription) {
			s.RetryPolicy = &eventgrid.RetryPolicy{MaxDeliveryAttempts: 3}
			s.PersistencePolicy = &eventgrid.PersistencePolicy{}
			s.Filter = &eventgrid.Filter{
				IncludedEventTypes: []string{"a"}, SubjectBeginsWith: "/b",
				AdvancedFilters: []eventgrid.AdvancedFilter{
					{OperatorType: "NumberGreaterThan", Key: "data.n", Value: json.RawMessage(`4.560`)},
					{OperatorType: "StringIn", Key: "subject", Values: []json.RawMessage{json.RawMessage(`"x"`), json.RawMessage(`"y"`)}},
				},
			}
		}, head + `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"}},` +
			`"retryPolicy":{"maxDeliveryAttempts":3},` +
			`"filter":{"includedEventTypes":["a"],"subjectBeginsWith":"/b","isSubjectCaseSensitive":false,"advancedFilters":[` +
			`{"operatorType":"NumberGreaterThan","key":"data.n","value":4.560},{"operatorType":"StringIn","key":"subject","values":["x","y"]}]},` +
			`"persistencePolicy":{"isPersisted":false}}}`},
		{"EmptyParts", func(s *eventgrid.EventSubscription) {
			s.RetryPolicy, s.Filter = &eventgrid.RetryPolicy{}, &eventgrid.Filter{}
		}, head + `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"}},"retryPolicy":{},"filter":{"isSubjectCaseSensitive":false}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.edit(s)
			if got := MustMarshal(t, resource.NewSubscription(s, prefix)); got != tt.want {
				t.Errorf("NewSubscription\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestRoundTrip decodes what NewSubscription writes and gets the same
// subscription back, less the secret.
func TestRoundTrip(t *testing.T) {
	body := `{"name":"s","properties":{"topic":"t","eventDeliverySchema":"CloudEventSchemaV1_0",` +
		`"destination":{"endpointType":"EventGrid","properties":{"endpointUrl":"https://e/api/events","sasKey":"k","topicName":"d","maxEventsPerBatch":2}},` +
		`"retryPolicy":{"maxDeliveryAttempts":4,"eventExpiryInMinutes":5},"persistencePolicy":{"isPersisted":false},` +
		`"filter":{"includedEventTypes":["a"],"subjectEndsWith":"z","isSubjectCaseSensitive":true,"advancedFilters":[{"operatorType":"NumberIn","key":"data.n","values":[1,2]}]}}}`
	sub, err := resource.DecodeSubscription([]byte(body), "t", "s")
	if err != nil {
		t.Fatal(err)
	}
	out := MustMarshal(t, resource.NewSubscription(&sub, prefix))
	again, err := resource.DecodeSubscription([]byte(out), "t", "s")
	if err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	again.Destination.SASKey = sub.Destination.SASKey
	if a, b := describe(sub), describe(again); a != b {
		t.Errorf("round trip\n got %s\nwant %s", b, a)
	}
}
