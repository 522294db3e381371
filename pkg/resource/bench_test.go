package resource_test

import (
	"testing"

	"github.com/edgegrid/edgegrid/pkg/resource"
)

// benchSubscription is a subscription body with most of what a client
// sets: a batching webhook, a retry policy and a filter with advanced
// filters.
const benchSubscription = `{"name":"s","properties":{"topic":"t","eventDeliverySchema":"EventGridSchema",
"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h.example/api/x?code=abc",
"maxEventsPerBatch":10,"preferredBatchSizeInKilobytes":64}},
"retryPolicy":{"maxDeliveryAttempts":10,"eventExpiryInMinutes":60},
"filter":{"includedEventTypes":["A","B","C"],"subjectBeginsWith":"/a/","subjectEndsWith":".json","isSubjectCaseSensitive":false,
"advancedFilters":[{"operatorType":"NumberGreaterThan","key":"data.n","value":5},
{"operatorType":"StringIn","key":"data.s","values":["x","y","z"]}]}}}`

// BenchmarkDecodeSubscription measures the decoder's cost per body, so that
// a change to how members are read can be compared before and after.
func BenchmarkDecodeSubscription(b *testing.B) {
	body := []byte(benchSubscription)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := resource.DecodeSubscription(body, "t", "s"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTopic measures the decoder's cost for a topic body.
func BenchmarkDecodeTopic(b *testing.B) {
	body := []byte(`{"name":"t","properties":{"inputSchema":"CloudEventSchemaV1_0"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := resource.DecodeTopic(body, "t"); err != nil {
			b.Fatal(err)
		}
	}
}
