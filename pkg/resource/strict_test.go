package resource_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// Numbers given as strings and header values that cannot be sent are
// refused, with the field named.
func TestDecodeSubscriptionStrict(t *testing.T) {
	hookWith := func(props string) string {
		return `"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://h/x"` + props + `}}`
	}
	static := func(value string) string {
		return hookWith(`,"deliveryAttributeMappings":[{"name":"x-h","type":"Static","properties":{"value":` + value + `}}]`)
	}
	const queue = `"destination":{"endpointType":"StorageQueue","properties":{"queueName":"events",` +
		`"connectionString":"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1",` +
		`"queueMessageTimeToLiveInSeconds":"60"}}`
	tests := []struct {
		name, props, code, msg string
	}{
		{"AttemptsString", hookWith(``) + `,"retryPolicy":{"maxDeliveryAttempts":"5"}`, eventgrid.EInvalidRetryPolicy,
			`properties.retryPolicy.maxDeliveryAttempts must be a number, not a string (got "5").`},
		{"ExpiryString", hookWith(``) + `,"retryPolicy":{"eventExpiryInMinutes":"30"}`, eventgrid.EInvalidRetryPolicy,
			`properties.retryPolicy.eventExpiryInMinutes must be a number, not a string`},
		{"TimeToLiveString", hookWith(``) + `,"retryPolicy":{"eventTimeToLiveInMinutes":" 30 "}`, eventgrid.EInvalidRetryPolicy,
			`properties.retryPolicy.eventTimeToLiveInMinutes must be a number, not a string`},
		{"BatchString", hookWith(`,"maxEventsPerBatch":"10"`), eventgrid.EInvalidDelivery,
			`properties.destination.properties.maxEventsPerBatch must be a number, not a string`},
		{"BatchKBString", hookWith(`,"preferredBatchSizeInKilobytes":"64"`), eventgrid.EInvalidDelivery,
			`properties.destination.properties.preferredBatchSizeInKilobytes must be a number, not a string`},
		{"LegacyBatchString", hookWith(``) + `,"deliveryPolicy":{"maxEventsPerBatch":"25"}`, eventgrid.EInvalidDelivery,
			`properties.deliveryPolicy.maxEventsPerBatch must be a number, not a string`},
		{"LegacyBytesString", hookWith(``) + `,"deliveryPolicy":{"approxBatchSizeInBytes":"200000"}`, eventgrid.EInvalidDelivery,
			`properties.deliveryPolicy.approxBatchSizeInBytes must be a number, not a string`},
		{"QueueTTLString", queue, eventgrid.EInvalidDestination,
			`properties.destination.properties.queueMessageTimeToLiveInSeconds must be a number, not a string`},
		{"StaticControlChar", static(`"a\u0001b"`), eventgrid.EInvalidDestination,
			`properties.destination.properties.deliveryAttributeMappings[0].properties.value holds the control character U+0001 at byte 1`},
		{"StaticNUL", static(`"\u0000"`), eventgrid.EInvalidDestination, `holds the control character U+0000 at byte 0`},
		{"StaticLineBreak", static(`"a\r\nX-Injected: 1"`), eventgrid.EInvalidDestination, `holds the control character U+000D at byte 1`},
		{"StaticDEL", static(`"a\u007f"`), eventgrid.EInvalidDestination, `holds the control character U+007F`},
		{"StaticLeadingSpace", static(`" a"`), eventgrid.EInvalidDestination,
			`deliveryAttributeMappings[0].properties.value must not begin or end with a space or tab`},
		{"StaticTrailingTab", static(`"a\t"`), eventgrid.EInvalidDestination, `must not begin or end with a space or tab`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resource.DecodeSubscription([]byte(`{"properties":{`+tt.props+`}}`), "t", "s")
			mustCode(t, err, tt.code, tt.msg)
		})
	}
	for _, ok := range []string{
		hookWith(`,"maxEventsPerBatch":10,"preferredBatchSizeInKilobytes":6.4e1`) + `,"retryPolicy":{"maxDeliveryAttempts":5}`,
		strings.Replace(queue, `"60"`, `60`, 1),
		strings.Replace(queue, `"60"`, `-1`, 1),
		static(`"a\tb é \"q\" !#~"`),
		static(`""`),
	} {
		if _, err := resource.DecodeSubscription([]byte(`{"properties":{`+ok+`}}`), "t", "s"); err != nil {
			t.Errorf("DecodeSubscription(%s): %v", ok, err)
		}
	}
}
