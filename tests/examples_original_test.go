package tests_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The original module's documented examples, replayed against the broker
// as a migrating user pastes them. TestExamples_MembersAccepted checks the
// examples of our own pages; this checks the original's: each body below
// has the members and values of one example of the page its comment
// cites, as printed (its JSON mistakes included), except where the page
// writes a placeholder for the reader's own address (an endpoint URL,
// which becomes a loopback sink here) or a template value ("...",
// <number>, true|false), which becomes a concrete one. Each is accepted and
// read back, or refused with the answer docs/api.md and docs/design.md
// (#the-original-modules-examples) promise.

// original is one replayed example.
type original struct {
	page, name          string
	method, path, ctype string
	body                string
	// status is the answer; for 200 on a PUT, check reads the resource
	// back; for a refusal, code and parts are the error's.
	status int
	code   string
	parts  []string
	check  func(t *testing.T, got map[string]any)
}

func TestExamples_OriginalDocs(t *testing.T) {
	t.Parallel()
	const (
		api       = "https://learn.microsoft.com/azure/event-grid/edge/api"
		schemas   = "https://learn.microsoft.com/azure/event-grid/edge/event-schemas"
		filtering = "https://learn.microsoft.com/azure/event-grid/edge/advanced-filtering"
		batching  = "https://learn.microsoft.com/azure/event-grid/edge/delivery-output-batching"
		retry     = "https://learn.microsoft.com/azure/event-grid/edge/delivery-retry"
		persist   = "https://learn.microsoft.com/azure/event-grid/edge/persist-state-linux"
		local     = "https://learn.microsoft.com/azure/event-grid/edge/pub-sub-events-webhook-local"
		toCloud   = "https://learn.microsoft.com/azure/event-grid/edge/forward-events-event-grid-cloud"
	)
	// delivery-retry, "Examples": the module-wide retry defaults, in the
	// colon form of that page. The attempt limit is raised to the api
	// page's template's 50, which the default limit of 30 refuses
	// (TestCompat_AttemptLimit; docs/design.md#the-original-modules-examples).
	b := startBroker(t, merge(devEnv(), "broker:defaultMaxDeliveryAttempts", "3", "broker:defaultEventTimeToLiveInSeconds", "1800",
		"api:retryPolicyLimits:maxDeliveryAttempts", "50"))
	if w := b.Logs("environment variable ignored: it is not a configuration key of this version (docs/configuration.md)"); len(w) != 0 {
		t.Errorf("the documented settings were warned about: %v", w)
	}
	eg, custom, ce, tut := newSink(t, nil), newSink(t, nil), newSink(t, nil), newSink(t, nil)
	sub := func(topic, name string) string { return "/topics/" + topic + "/eventSubscriptions/" + name }
	const ctJSON = "application/json"
	placeholder := func(field, p string) []string {
		return []string{"properties.destination.properties." + field + " holds the placeholder " + p + ": replace every placeholder with your own value."}
	}

	steps := []original{
		// api: "Set up topic with EventGrid schema", "… custom schema",
		// "… cloud event schema".
		{page: api, name: "TopicEventGridSchema", method: http.MethodPut, path: "/topics/myeventgridtopic", body: `
    {
        "name": "myeventgridtopic",
        "properties":
        {
            "inputSchema": "EventGridSchema"
        }
    }`, status: 200, check: wants("properties.inputSchema", "EventGridSchema")},
		{page: api, name: "TopicCustomSchema", method: http.MethodPut, path: "/topics/mycustomschematopic", body: `
    {
        "name": "mycustomschematopic",
        "properties":
        {
            "inputSchema": "CustomSchema"
        }
    }`, status: 200, check: wants("properties.inputSchema", "CustomEventSchema")},
		{page: api, name: "TopicCloudEventSchema", method: http.MethodPut, path: "/topics/mycloudeventschematopic", body: `
    {
        "name": "mycloudeventschematopic",
        "properties":
        {
            "inputSchema": "CloudEventSchemaV1_0"
        }
    }`, status: 200, check: wants("properties.inputSchema", "CloudEventSchemaV1_0")},

		// api: "Put event subscription", the template with its values
		// ("maxDeliveryAttempts": 50 among them) and concrete ones for
		// its "...", <number> and true|false.
		{page: api, name: "SubscriptionTemplate", method: http.MethodPut, path: sub("myeventgridtopic", "templateSub"), body: `{
    "name": "templateSub",
    "properties":
    {
        "topicName": "myeventgridtopic",
        "eventDeliverySchema": "EventGridSchema",
        "retryPolicy":
        {
            "eventExpiryInMinutes": 120,
            "maxDeliveryAttempts": 50
        },
        "destination":
        {
            "endpointType": "WebHook",
            "properties":
            {
                "endpointUrl": "` + eg.URL + `/template",
                "maxEventsPerBatch": 10,
                "preferredBatchSizeInKilobytes": 1033
            }
        },
        "filter":
        {
            "subjectBeginsWith": "myapp",
            "subjectEndsWith": "motorcycles",
            "isSubjectCaseSensitive": true,
            "includedEventTypes": ["recordInserted", "recordUpdated"],
            "advancedFilters":
            [
                { "OperatorType": "BoolEquals", "Key": "data.ok", "Value": true },
                { "OperatorType": "NumberLessThan", "Key": "data.n", "Value": 100 },
                { "OperatorType": "NumberGreaterThan", "Key": "data.n", "Value": 0 },
                { "OperatorType": "NumberLessThanOrEquals", "Key": "data.n", "Value": 99 },
                { "OperatorType": "NumberGreaterThanOrEquals", "Key": "data.n", "Value": 1 },
                { "OperatorType": "NumberIn", "Key": "data.n", "Values": [1, 2, 3] },
                { "OperatorType": "NumberNotIn", "Key": "data.m", "Values": [4, 5, 6] },
                { "OperatorType": "StringIn", "Key": "data.s", "Values": ["a", "b", "c"] },
                { "OperatorType": "StringNotIn", "Key": "data.t", "Values": ["d", "e", "f"] },
                { "OperatorType": "StringBeginsWith", "Key": "data.s", "Values": ["a", "b", "c"] },
                { "OperatorType": "StringEndsWith", "Key": "data.s", "Values": ["a", "b", "c"] },
                { "OperatorType": "StringContains", "Key": "data.s", "Values": ["a", "b", "c"] }
            ]
        }
    }
}`, status: 200, check: func(t *testing.T, got map[string]any) {
			wants("properties.retryPolicy.maxDeliveryAttempts", 50.0, "properties.retryPolicy.eventExpiryInMinutes", 120.0,
				"properties.destination.properties.maxEventsPerBatch", 10.0, "properties.destination.properties.preferredBatchSizeInKilobytes", 1033.0,
				"properties.filter.isSubjectCaseSensitive", true)(t, got)
			if fs, _ := path(got, "properties.filter.advancedFilters").([]any); len(fs) != 12 {
				t.Errorf("advancedFilters read back %v, want the 12", fs)
			}
		}},
		// api: "Set up WebHook as destination, events to be delivered in
		// eventgridschema", with its comma after the last member.
		{page: api, name: "WebHookTrailingComma", method: http.MethodPut, path: sub("myeventgridtopic", "webhookSub"), body: `{
    "properties":
    {
        "destination":
        {
            "endpointType": "WebHook",
            "properties":
            {
                "endpointUrl": "` + eg.URL + `/webhook",
                "eventDeliverySchema": "eventgridschema",
            }
        }
    }
}`, status: 200, check: wants("properties.eventDeliverySchema", "EventGridSchema", "properties.destination.properties.endpointUrl", eg.URL+"/webhook")},
		// api: "Set up IoT Edge as destination": edgeHub is not there
		// outside IoT Edge.
		{page: api, name: "EdgeHub", method: http.MethodPut, path: sub("myeventgridtopic", "edgeHubSub"), body: `{
    "properties":
    {
        "destination":
        {
            "endpointType": "EdgeHub",
            "properties":
            {
                "outputName": "<eventgridmodule_output_port_name>"
            }
        }
    }
}`, status: 400, code: "InvalidDestination", parts: []string{"properties.destination.endpointType EdgeHub cannot be used here: EdgeHub destinations need the IoT Edge runtime"}},
		// api: "Set up Event Grid Cloud as destination" and the four
		// destinations of the second preview, their placeholders left in.
		{page: api, name: "EventGridPlaceholders", method: http.MethodPut, path: sub("myeventgridtopic", "cloudSub"), body: `{
    "properties":
    {
        "destination":
        {
            "endpointType": "EventGrid",
            "properties":
            {
                "endpointUrl": "<eventgrid_user_topic_url>",
                "sasKey": "<user_topic_sas_key>",
                "topicName": "<new value to populate in forwarded EventGridEvent.Topic>"
            }
        }
    }
}`, status: 400, code: "InvalidDestination", parts: placeholder("endpointUrl", "<eventgrid_user_topic_url>")},
		{page: api, name: "EventHubPlaceholder", method: http.MethodPut, path: sub("myeventgridtopic", "hubSub"), body: `
        {
          "properties": {
            "destination": {
              "endpointType": "eventHub",
              "properties": {
                "connectionString": "<your-event-hub-connection-string>"
              }
            }
          }
        }`, status: 400, code: "InvalidDestination", parts: placeholder("connectionString", "<your-event-hub-connection-string>")},
		{page: api, name: "ServiceBusQueuePlaceholder", method: http.MethodPut, path: sub("myeventgridtopic", "sbqSub"), body: `
        {
          "properties": {
            "destination": {
              "endpointType": "serviceBusQueue",
              "properties": {
                "connectionString": "<your-service-bus-queue-connection-string>"
              }
            }
          }
        }`, status: 400, code: "InvalidDestination", parts: placeholder("connectionString", "<your-service-bus-queue-connection-string>")},
		{page: api, name: "ServiceBusTopicPlaceholder", method: http.MethodPut, path: sub("myeventgridtopic", "sbtSub"), body: `
        {
          "properties": {
            "destination": {
              "endpointType": "serviceBusTopic",
              "properties": {
                "connectionString": "<your-service-bus-topic-connection-string>"
              }
            }
          }
        }`, status: 400, code: "InvalidDestination", parts: placeholder("connectionString", "<your-service-bus-topic-connection-string>")},
		{page: api, name: "StorageQueuePlaceholder", method: http.MethodPut, path: sub("myeventgridtopic", "sqSub"), body: `
        {
          "properties": {
            "destination": {
              "endpointType": "storageQueue",
              "properties": {
                "queueName": "<your-storage-queue-name>",
                "connectionString": "<your-storage-account-connection-string>"
              }
            }
          }
        }`, status: 400, code: "InvalidDestination", parts: placeholder("connectionString", "<your-storage-account-connection-string>")},

		// The subscriptions the event-schemas examples are delivered to.
		{page: api, name: "CustomSubscription", method: http.MethodPut, path: sub("mycustomschematopic", "all"),
			body: `{"properties": {"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "` + custom.URL + `"}}}}`, status: 200},
		{page: api, name: "CloudEventSubscription", method: http.MethodPut, path: sub("mycloudeventschematopic", "all"),
			body: `{"properties": {"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "` + ce.URL + `"}}}}`, status: 200},

		// event-schemas: "Example — EventGrid schema event", "Example —
		// Custom Schema Event", "Example — cloud event".
		{page: schemas, name: "EventGridEvent", method: http.MethodPost, path: "/topics/myeventgridtopic/events", ctype: ctJSON, body: `[
  {
    "id": "1807",
    "eventType": "recordInserted",
    "subject": "myapp/vehicles/motorcycles",
    "eventTime": "2017-08-10T21:03:07+00:00",
    "data": {
      "make": "Ducati",
      "model": "Monster"
    },
    "dataVersion": "1.0"
  }
]`, status: 200},
		{page: schemas, name: "CustomEvent", method: http.MethodPost, path: "/topics/mycustomschematopic/events", ctype: ctJSON, body: `[
  {
    "eventdata": {
      "make": "Ducati",
      "model": "Monster"
    }
  }
]`, status: 200},
		{page: schemas, name: "CloudEvent", method: http.MethodPost, path: "/topics/mycloudeventschematopic/events", ctype: ctJSON, body: cloudEventExample, status: 200},
		// The CloudEvents media types keep CloudEvents 1.0's rules.
		{page: schemas, name: "CloudEventAsCloudEventsBatch", method: http.MethodPost, path: "/topics/mycloudeventschematopic/events",
			ctype: "application/cloudevents-batch+json", body: cloudEventExample, status: 400, code: "InvalidEvent",
			parts: []string{`event at index 0: "dataVersion" is not a valid attribute name`}},

		// advanced-filtering: each example's filter, on a subscription.
		{page: filtering, name: "JSONSyntax", method: http.MethodPut, path: sub("myeventgridtopic", "syntax"), body: `{"properties": {
"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "` + eg.URL + `/syntax"}},
    "filter": {
        "advancedFilters": [{
                "operatorType": "NumberGreaterThanOrEquals",
                "key": "Data.Key1",
                "value": 5
            }, {
                "operatorType": "StringContains",
                "key": "Subject",
                "values": ["container1", "container2"]
            }
        ]
    }
}}`, status: 200, check: wants("properties.filter.advancedFilters.1.values.1", "container2")},
		{page: filtering, name: "NumericSingleValue", method: http.MethodPut, path: sub("myeventgridtopic", "numbers"), body: `{"properties": {
"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "` + eg.URL + `/numbers"}},
    "filter": {
        "advancedFilters": [
            {
                "operatorType": "NumberGreaterThan",
                "key": "Data.Key1",
                "value": 5
            },
            {
                "operatorType": "NumberGreaterThanOrEquals",
                "key": "Data.Key2",
                "value": *456
            },
            {
                "operatorType": "NumberLessThan",
                "key": "Data.P*P2.P3",
                "value": 1000
            },
            {
                "operatorType": "NumberLessThanOrEquals",
                "key": "Data.P*P2",
                "value": 999
            }
        ]
    }
}}`, status: 400, code: "InvalidJson", parts: []string{"The request body is not valid JSON: line 13, column 26: invalid character '*' looking for beginning of value",
			"expected a value; a number is written with digits only, without '*': 456"}},
		{page: filtering, name: "NumericRange", method: http.MethodPut, path: sub("myeventgridtopic", "ranges"), body: `{"properties": {
"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "` + eg.URL + `/ranges"}},
    "filter": {
        "advancedFilters": [
            {
                "operatorType": "NumberIn",
                "key": "Data.Key1",
                "values": [1, 10, 100]
            },
            {
                "operatorType": "NumberNotIn",
                "key": "Data.Key2",
                "values": [2, 3, 4.56]
            }
        ]
    }
}}`, status: 200, check: wants("properties.filter.advancedFilters.1.values.2", 4.56)},
		// Keys such as RootKey and BoolKey1 are not those the page allows
		// for EventGridSchema ("Allowed advanced filter keys"): they go on
		// the custom schema topic, where any key is.
		{page: filtering, name: "StringRange", method: http.MethodPut, path: sub("mycustomschematopic", "strings"), body: `{"properties": {
"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "` + custom.URL + `/strings"}},
    "filter": {
        "advancedFilters": [
            {
                "operatorType": "StringContains",
                "key": "Data.Key1",
                "values": ["microsoft", "azure"]
            },
            {
                "operatorType": "StringBeginsWith",
                "key": "Data.Key2",
                "values": ["event", "grid"]
            },
            {
                "operatorType": "StringEndsWith",
                "key": "Data.P3.P4",
                "values": ["jpg", "jpeg", "png"]
            },
            {
                "operatorType": "StringIn",
                "key": "RootKey",
                "values": ["exact", "string", "matches"]
            },
            {
                "operatorType": "StringNotIn",
                "key": "RootKey",
                "values": ["aws", "bridge"]
            }
        ]
    }
}}`, status: 200, check: wants("properties.filter.advancedFilters.4.operatorType", "StringNotIn")},
		{page: filtering, name: "Boolean", method: http.MethodPut, path: sub("mycustomschematopic", "booleans"), body: `{"properties": {
"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "` + custom.URL + `/booleans"}},
    "filter": {
        "advancedFilters": [
            {
                "operatorType": "BoolEquals",
                "key": "BoolKey1",
                "value": true
            },
            {
                "operatorType": "BoolEquals",
                "key": "BoolKey2",
                "value": false
            }
        ]
    }
}}`, status: 200, check: wants("properties.filter.advancedFilters.1.value", false)},

		// delivery-output-batching: "Turn on output batching", with its
		// comma after the destination.
		{page: batching, name: "OutputBatching", method: http.MethodPut, path: sub("myeventgridtopic", "batched"), body: `{
    "properties":
    {
        "destination":
        {
            "endpointType": "WebHook",
            "properties":
             {
                "endpointUrl": "` + eg.URL + `/batched",
                "maxEventsPerBatch": 10,
                "preferredBatchSizeInKilobytes": 64
             }
        },
    }
}`, status: 200, check: wants("properties.destination.properties.maxEventsPerBatch", 10.0, "properties.destination.properties.preferredBatchSizeInKilobytes", 64.0)},
		// delivery-retry: the subscription with 3 attempts and 30 minutes.
		{page: retry, name: "RetryPolicy", method: http.MethodPut, path: sub("myeventgridtopic", "retried"), body: `{
 "properties": {
  "destination": {
   "endpointType": "WebHook",
   "properties": {
    "endpointUrl": "` + eg.URL + `/retried",
    "eventDeliverySchema": "eventgridschema"
   }
  },
  "retryPolicy": {
   "eventExpiryInMinutes": 30,
   "maxDeliveryAttempts": 3
  }
 }
}`, status: 200, check: wants("properties.retryPolicy.maxDeliveryAttempts", 3.0, "properties.retryPolicy.eventExpiryInMinutes", 30.0, "properties.eventDeliverySchema", "EventGridSchema")},
		// persist-state-linux: "Persist events": edgegrid keeps events in
		// memory by design.
		{page: persist, name: "PersistEvents", method: http.MethodPut, path: sub("myeventgridtopic", "persisted"), body: `
        {
          "properties": {
            "persistencePolicy": {
              "isPersisted": "true"
            },
            "destination": {
              "endpointType": "WebHook",
              "properties": {
                "endpointUrl": "` + eg.URL + `/persisted"
              }
            }
          }
        }`, status: 400, code: "InvalidPersistencePolicy", parts: []string{"properties.persistencePolicy.isPersisted cannot be true: edgegrid keeps events in memory by design"}},

		// pub-sub-events-webhook-local: topic.json (its "inputschema" in
		// lower case), subscription.json and event.json.
		{page: local, name: "TutorialTopic", method: http.MethodPut, path: "/topics/sampleTopic1", body: `
        {
          "name": "sampleTopic1",
          "properties": {
            "inputschema": "eventGridSchema"
          }
        }`, status: 200, check: wants("properties.inputSchema", "EventGridSchema")},
		{page: local, name: "TutorialSubscription", method: http.MethodPut, path: sub("sampleTopic1", "sampleSubscription1"), body: `
        {
          "properties": {
            "destination": {
              "endpointType": "WebHook",
              "properties": {
                "endpointUrl": "` + tut.URL + `"
              }
            }
          }
        }`, status: 200, check: wants("properties.topic", "sampleTopic1")},
		{page: local, name: "TutorialEvent", method: http.MethodPost, path: "/topics/sampleTopic1/events", ctype: ctJSON, body: `
        [
          {
            "id": "eventId-func-0",
            "eventType": "recordInserted",
            "subject": "myapp/vehicles/motorcycles",
            "eventTime": "2019-07-28T21:03:07+00:00",
            "dataVersion": "1.0",
            "data": {
              "make": "Ducati",
              "model": "Monster"
            }
          }
        ]`, status: 200},
		// forward-events-event-grid-cloud: subscription3.json's example,
		// its key a placeholder.
		{page: toCloud, name: "ForwardToCloud", method: http.MethodPut, path: sub("myeventgridtopic", "sampleSubscription3"), body: `
        {
          "properties": {
            "destination": {
              "endpointType": "eventGrid",
              "properties": {
                "endpointUrl": "https://testegcloudtopic.westus2-1.eventgrid.azure.net/api/events?api-version=2018-01-01",
                 "sasKey": "<your-event-grid-topic-saskey>",
                 "topicName": null
              }
            }
          }
        }`, status: 400, code: "InvalidDestination", parts: placeholder("sasKey", "<your-event-grid-topic-saskey>")},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			replay(t, b, s)
		})
	}

	// What the event-schemas examples and the tutorial's event were
	// delivered as: EventGridSchema as published, with the topic and
	// metadataVersion the module adds; the custom event as it was; the
	// CloudEvent as CloudEvents 1.0, its dataVersion the extension
	// dataversion.
	delivered := func(k *sink) map[string]any {
		t.Helper()
		var got map[string]any
		eventually(t, 10*time.Second, func() error {
			for _, r := range k.requests() {
				var evs []map[string]any
				if err := json.Unmarshal(r.body, &evs); err != nil || len(evs) != 1 {
					return fmt.Errorf("delivery %s is not one event: %v", r.body, err)
				}
				got = evs[0]
				return nil
			}
			return fmt.Errorf("nothing delivered yet")
		})
		return got
	}
	wants("id", "eventId-func-0", "topic", "sampleTopic1", "metadataVersion", "1", "data.make", "Ducati")(t, delivered(tut))
	wants("id", "1807", "topic", "myeventgridtopic", "dataVersion", "1.0")(t, delivered(eg))
	if got := delivered(custom); len(got) != 1 || path(got, "eventdata.model") != "Monster" {
		t.Errorf("custom event delivered as %v, want it as published", got)
	}
	got := delivered(ce)
	wants("specversion", "1.0", "dataversion", "1.0", "id", "1807", "source", "myapp/vehicles/motorcycles", "data.model", "Monster")(t, got)
	for _, k := range []string{"specVersion", "dataVersion"} {
		if _, ok := got[k]; ok {
			t.Errorf("the CloudEvent was delivered with %s, which CloudEvents 1.0 does not name so: %v", k, got)
		}
	}
}

// cloudEventExample is event-schemas' "Example — cloud event" as printed.
const cloudEventExample = `[{
       "id": "1807",
       "type": "recordInserted",
       "source": "myapp/vehicles/motorcycles",
       "time": "2017-08-10T21:03:07+00:00",
       "datacontenttype": "application/json",
       "data": {
            "make": "Ducati",
            "model": "Monster"
        },
        "dataVersion": "1.0",
        "specVersion": "1.0-rc1"
}]`

// replay sends one example and checks the answer: for a PUT accepted,
// what GET reads back.
func replay(t *testing.T, b *broker, s original) {
	t.Helper()
	url := b.URL + s.path + "?" + apiVersion
	ctype := s.ctype
	if ctype == "" {
		ctype = "application/json"
	}
	status, _, rb := do(t, nil, s.method, url, ctype, s.body)
	if status != s.status {
		t.Fatalf("%s (%s): %s %s = %d, want %d: %s", s.name, s.page, s.method, s.path, status, s.status, rb)
	}
	if s.status != http.StatusOK {
		code, msg := apiError(t, rb)
		if code != s.code {
			t.Errorf("%s (%s): code %s, want %s: %s", s.name, s.page, code, s.code, msg)
		}
		for _, p := range s.parts {
			if !strings.Contains(msg, p) {
				t.Errorf("%s (%s): message %q does not hold %q", s.name, s.page, msg, p)
			}
		}
		if s.method == http.MethodPut { // nothing of a refused PUT is stored
			mustDo(t, http.MethodGet, url, "", nil, http.StatusNotFound)
		}
		return
	}
	if s.check == nil {
		return
	}
	var got map[string]any
	if err := json.Unmarshal(mustDo(t, http.MethodGet, url, "", nil, http.StatusOK), &got); err != nil {
		t.Fatal(err)
	}
	s.check(t, got)
}

// wants returns a check that each path (dot-separated, array indexes as
// numbers) of a JSON object holds its value.
func wants(pathsAndValues ...any) func(t *testing.T, got map[string]any) {
	return func(t *testing.T, got map[string]any) {
		t.Helper()
		for i := 0; i+1 < len(pathsAndValues); i += 2 {
			p := pathsAndValues[i].(string)
			if v := path(got, p); v != pathsAndValues[i+1] {
				t.Errorf("%s = %v (%T), want %v in %v", p, v, v, pathsAndValues[i+1], got)
			}
		}
	}
}

// path returns the value at p in v, matching member names ignoring case.
func path(v any, p string) any {
	for _, seg := range strings.Split(p, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = member(x, seg)
		case []any:
			var i int
			if _, err := fmt.Sscan(seg, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
