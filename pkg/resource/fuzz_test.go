package resource_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// FuzzDecodeTopic decodes arbitrary topic bodies: a refusal carries a code,
// and what is accepted reads back the same from what GET returns for it.
func FuzzDecodeTopic(f *testing.F) {
	for _, s := range []string{``, `{}`, `null`, `{"name":"t","properties":{"inputSchema":"CustomSchema"}}`,
		`{"Properties":"{\"InputSchema\":\"cloudeventschemav1_0\"}"}`, `{"id":"x","type":"y","properties":{"endpoint":"e"}}`,
		`{"properties":{"inputSchemma":"x"}}`, `{"location":null,"tags":{}}`, `{"name":"T","name":"t"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		tp, err := resource.DecodeTopic(body, "t")
		if err != nil {
			mustBeClientError(t, err)
			return
		}
		b, err := json.Marshal(resource.NewTopic(tp, prefix, "https://eventgridmodule:4438"))
		if err != nil {
			t.Fatal(err)
		}
		again, err := resource.DecodeTopic(b, "t")
		if err != nil || again != tp {
			t.Fatalf("GET of %+v is %s, which reads back as %+v, %v", tp, b, again, err)
		}
	})
}

// FuzzDecodeSubscription decodes arbitrary subscription bodies. A refusal
// carries a code. What is accepted and stored by a registry shows no secret
// in what GET returns, and a PUT of exactly that is accepted and changes
// nothing (docs/api.md#secrets).
func FuzzDecodeSubscription(f *testing.F) {
	const cs = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=c2VjcmV0;EntityPath=q"
	const storage = "AccountName=a;AccountKey=a2V5;QueueEndpoint=http://127.0.0.1:1/a;BlobEndpoint=http://127.0.0.1:2/a"
	for i, s := range []string{
		benchSubscription,
		`{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://u:p@h/x?code=k#f","signingSecret":"` + testSecret + `",` +
			`"deliveryAttributeMappings":[{"name":"a","type":"Static","properties":{"value":"v","isSecret":true}},{"name":"b","type":"dynamic","properties":{"sourceField":"data.x"}}]}},` +
			`"deadLetterDestination":{"endpointType":"StorageBlob","properties":{"blobContainerName":"dead","connectionString":"` + storage + `"}}}}`,
		`{"properties":{"destination":{"endpointType":"eventgrid","properties":{"endpointUrl":"https://x.eventgrid.azure.net/api/events?api-version=2018-01-01","sasKey":"k","topicName":"d"}}}}`,
		`{"properties":{"destination":{"endpointType":"EventHub","properties":{"connectionString":"` + cs + `"}}}}`,
		`{"properties":{"destination":{"endpointType":"StorageQueue","properties":{"connectionString":"` + storage + `","queueName":"qq1","queueMessageTimeToLiveInSeconds":-1}}}}`,
		`{"properties":{"destination":{"endpointType":"EdgeHub","properties":{"outputName":"o"}},"deliveryPolicy":{"approxBatchSizeInBytes":2048}}}`,
		`{"properties":{"deliveryConfiguration":{"deliveryMode":"Queue","queue":{"eventTimeToLive":"P1D","receiveLockDurationInSeconds":60}},"filtersConfiguration":{"filters":[{"operatorType":"IsNotNull","key":"data.a"}]}}}`,
		`{"Properties":{"TopicName":"t","PersistencePolicy":"false","Filter":{"IncludedEventTypes":"[\"a\"]","AdvancedFilters":"[{\"OperatorType\":\"NumberIn\",\"Key\":\"data.n\",\"Values\":[1, 2.50]}]"},` +
			`"Destination":{"EndpointType":"WebHook","Properties":{"EndpointUrl":"https://h/x","EventDeliverySchema":"EventGridSchema"}}}}`,
		`{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointBaseUrl":"https://h/x"}}}}`,
		`{"properties":{"expirationTimeUtc":null,"filter":{"subjectBeginWith":"x"}}}`,
	} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, schema uint8, body []byte) {
		sub, err := resource.DecodeSubscription(body, "t", "s")
		if err != nil {
			mustBeClientError(t, err)
			return
		}
		reg := fuzzRegistry(t, schema)
		stored, _, err := reg.PutSubscription(t.Context(), sub)
		if err != nil {
			mustBeClientError(t, err)
			return
		}
		get, err := json.Marshal(resource.NewSubscription(stored, prefix))
		if err != nil {
			t.Fatal(err)
		}
		mustShowNoSecret(t, get, stored)
		again, err := resource.DecodeSubscriptionUpdate(get, "t", "s", stored)
		if err != nil {
			t.Fatalf("a PUT of GET %s is refused: %v", get, err)
		}
		after, _, err := reg.PutSubscription(t.Context(), again)
		if err != nil {
			t.Fatalf("a PUT of GET %s is refused by the registry: %v", get, err)
		}
		if a, b := comparable(stored), comparable(after); !reflect.DeepEqual(a, b) {
			t.Fatalf("a PUT of GET changed the subscription\nGET    %s\nbefore %+v\nafter  %+v", get, a, b)
		}
	})
}

// fuzzRegistry returns a registry holding the topic "t" of one of the
// schemas, under rules that let any destination kind be stored.
func fuzzRegistry(t *testing.T, schema uint8) *registry.Registry {
	o := registry.DefaultOptions()
	o.WebhookHTTPSOnly, o.EventGridHTTPSOnly, o.EdgeHubAvailable = false, false, true
	reg := registry.New(o, nil)
	schemas := []eventgrid.InputSchema{eventgrid.EventGridSchema, eventgrid.CloudEventSchemaV1_0, eventgrid.CustomEventSchema}
	if _, _, err := reg.PutTopic(t.Context(), eventgrid.Topic{Name: "t", InputSchema: schemas[int(schema)%len(schemas)]}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// comparable returns s with what a PUT assigns (its UID) cleared and its
// JSON literals compacted, as GET writes them.
func comparable(s *eventgrid.EventSubscription) eventgrid.EventSubscription {
	c := *s
	c.UID = 0
	if s.Filter != nil {
		f := *s.Filter
		f.AdvancedFilters = nil
		for _, a := range s.Filter.AdvancedFilters {
			a.Value = compact(a.Value)
			var vs []json.RawMessage
			for _, v := range a.Values {
				vs = append(vs, compact(v))
			}
			a.Values = vs
			f.AdvancedFilters = append(f.AdvancedFilters, a)
		}
		c.Filter = &f
	}
	return c
}

func compact(v json.RawMessage) json.RawMessage {
	if v == nil {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// mustShowNoSecret fails t if get, what GET returns for s, holds a member
// that carries a secret, or a URL with a part that may.
func mustShowNoSecret(t *testing.T, get []byte, s *eventgrid.EventSubscription) {
	t.Helper()
	var v any
	if err := json.Unmarshal(get, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch strings.ToLower(k) {
				case "connectionstring", "saskey", "signingsecret":
					t.Fatalf("GET shows %s.%s: %s", path, k, get)
				case "endpointurl":
					if u := x.(string); resource.EndpointBaseURL(u) != u {
						t.Fatalf("GET shows %s.%s %q: %s", path, k, u, get)
					}
				case "value":
					if m, ok := v["isSecret"]; ok && m == true {
						t.Fatalf("GET shows the value of a secret header: %s", get)
					}
				}
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		}
	}
	walk("", v)
}

// mustBeClientError fails t unless err is an error the API reports with a
// code and a message.
func mustBeClientError(t *testing.T, err error) {
	t.Helper()
	if eventgrid.ErrorCode(err) == eventgrid.EInternal || eventgrid.ErrorMessage(err) == "" {
		t.Fatalf("error without a code or a message: %v", err)
	}
}

// FuzzParseISODuration reads arbitrary durations: what it accepts is
// positive or zero, at most 100 years, and reads back the same from its
// seconds written as PTnS.
func FuzzParseISODuration(f *testing.F) {
	for _, s := range []string{"P1D", "PT1H", "PT0.5S", "P1W", "P1DT2H3M4.5S", "pt1m", " PT1M ", "P", "PT", "P1Y", "PT1,5S", "P1DT", "PTH", "P99999999999D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := resource.ParseISODuration(s)
		if err != nil {
			return
		}
		if d < 0 || d > 100*365*24*time.Hour {
			t.Fatalf("ParseISODuration(%q) = %v", s, d)
		}
		text := fmt.Sprintf("PT%sS", strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.9f", d.Seconds()), "0"), "."))
		again, err := resource.ParseISODuration(text)
		if err != nil || (again-d).Abs() > time.Microsecond {
			t.Fatalf("ParseISODuration(%q) = %v; written %s, it reads back as %v, %v", s, d, text, again, err)
		}
	})
}
