package registry_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// The rules of each endpoint type, one table per type. Every case puts a
// subscription whose destination is the type's valid one changed by edit,
// through a registry with the default options (webhooks may use http)
// changed by opts, on a topic of schema (EventGridSchema when empty).

const (
	secret24 = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"                                                         // 24 bytes
	secret64 = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==" // 64 bytes
	secret23 = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRY="                                                         // 23 bytes
	secret65 = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0A=" // 65 bytes

	accountKey = "c2VjcmV0LWtleQ=="
	entityCS   = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey=" + accountKey + ";EntityPath=hub"
	storageCS  = "DefaultEndpointsProtocol=https;AccountName=edgestore;AccountKey=" + accountKey + ";EndpointSuffix=core.windows.net"
	egURL      = "https://x.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01"
)

// secrets are the texts no error message may show.
var secrets = []string{"whsec_MfKQ", "AAECAwQF", accountKey}

type ruleCase struct {
	name   string
	opts   func(*registry.Options)
	schema eventgrid.InputSchema
	edit   func(s *eventgrid.EventSubscription)
	code   string   // "" when valid
	parts  []string // what the message says
}

// checkRules runs tests against subscriptions whose destination starts as
// valid returns it.
func checkRules(t *testing.T, valid func() eventgrid.Destination, tests []ruleCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := MustNew(t, tt.opts)
			MustPutTopic(t, r, "t", tt.schema)
			sub := eventgrid.EventSubscription{Topic: "t", Name: "s", Destination: valid()}
			if tt.edit != nil {
				tt.edit(&sub)
			}
			_, _, err := r.PutSubscription(t.Context(), sub)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("PutSubscription: %v", err)
				}
				return
			}
			mustCode(t, err, tt.code)
			msg := eventgrid.ErrorMessage(err)
			for _, p := range tt.parts {
				if !strings.Contains(msg, p) {
					t.Errorf("message %q does not say %q", msg, p)
				}
			}
			for _, s := range secrets {
				if strings.Contains(msg, s) {
					t.Errorf("message %q shows a secret", msg)
				}
			}
		})
	}
}

func httpsOnly(o *registry.Options) { o.WebhookHTTPSOnly = true }

func withURL(u string) func(*eventgrid.EventSubscription) {
	return func(s *eventgrid.EventSubscription) { s.Destination.EndpointURL = u }
}

func TestDestinationRules_WebHook(t *testing.T) {
	const field = "properties.destination.properties."
	webhook := func() eventgrid.Destination {
		return eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://h/x"}
	}
	dst := func(f func(d *eventgrid.Destination)) func(*eventgrid.EventSubscription) {
		return func(s *eventgrid.EventSubscription) { f(&s.Destination) }
	}
	checkRules(t, webhook, []ruleCase{
		{name: "HTTPS", opts: httpsOnly},
		{name: "HTTPRefused", opts: httpsOnly, edit: withURL("http://h/x"), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl must use https: outbound__webhook__httpsOnly is true."}},
		{name: "HTTPAllowed", edit: withURL("http://h/x")},
		{name: "NoURL", edit: withURL(""), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl is required."}},
		{name: "RelativeURL", edit: withURL("/x"), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl must be an absolute http or https URL."}},
		{name: "OtherScheme", edit: withURL("ftp://h/x"), code: eventgrid.EInvalidDestination, parts: []string{"absolute http or https URL"}},
		{name: "BadEscape", edit: withURL("https://h/%zz"), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl is not a valid URL"}},
		{name: "NoHost", edit: withURL("http://:80/x"), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl must name a host."}},
		{name: "NoHostNoPort", edit: withURL("http://:/x"), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl must name a host."}},
		{name: "EmptyIPv6", edit: withURL("http://[]:8080/x"), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl is not a valid URL: invalid host"}},
		{name: "PortTooHigh", edit: withURL("http://127.0.0.1:99999/x"), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl port 99999 is out of range; a port is 1 to 65535."}},
		{name: "Port65536", edit: withURL("http://127.0.0.1:65536/x"), code: eventgrid.EInvalidDestination, parts: []string{"port 65536 is out of range"}},
		{name: "Port0", edit: withURL("http://h:0/x"), code: eventgrid.EInvalidDestination, parts: []string{"port 0 is out of range"}},
		{name: "PortWord", edit: withURL("http://h:abc/x"), code: eventgrid.EInvalidDestination, parts: []string{field + `endpointUrl is not a valid URL: invalid port ":abc" after host.`}},
		{name: "Port65535", edit: withURL("http://127.0.0.1:65535/x")},
		{name: "Port1", edit: withURL("http://h:1/x")},
		{name: "IPv6", edit: withURL("http://[::1]:8080/x")},
		{name: "EmptyPort", edit: withURL("http://h:/x")}, // the scheme's port
		// A placeholder left in an example is named as one, as for every
		// kind of destination.
		{name: "PlaceholderHost", edit: withURL("https://<hook>.example/x"), code: eventgrid.EInvalidDestination,
			parts: []string{field + "endpointUrl holds the placeholder <hook>: replace every placeholder with your own value."}},
		{name: "PlaceholderURL", edit: withURL("<webhook_url>"), code: eventgrid.EInvalidDestination,
			parts: []string{field + "endpointUrl holds the placeholder <webhook_url>: replace every placeholder with your own value."}},
		{name: "ShellVariableHost", edit: withURL("http://$HOST:8080/x"), code: eventgrid.EInvalidDestination, parts: []string{field + `endpointUrl host "$HOST" is not a host name`}},
		{name: "UnderscoreHost", edit: withURL("http://a_b.example:8080/x")},
		{name: "InternationalHost", edit: withURL("http://bücher.example/x")},
		{name: "IPv6Zone", edit: withURL("http://[fe80::1%25eth0]:8080/x")},

		{name: "Structured", edit: dst(func(d *eventgrid.Destination) { d.ContentMode = eventgrid.ContentStructured })},
		{name: "StructuredCustom", schema: eventgrid.CustomEventSchema, edit: dst(func(d *eventgrid.Destination) { d.ContentMode = eventgrid.ContentStructured })},
		{name: "BinaryCloudEvents", schema: eventgrid.CloudEventSchemaV1_0, edit: dst(func(d *eventgrid.Destination) { d.ContentMode = eventgrid.ContentBinary })},
		{name: "BinaryConverted", edit: func(s *eventgrid.EventSubscription) {
			s.EventDeliverySchema, s.Destination.ContentMode = eventgrid.CloudEventSchemaV1_0, eventgrid.ContentBinary
		}},
		{name: "BinaryEventGrid", edit: dst(func(d *eventgrid.Destination) { d.ContentMode = eventgrid.ContentBinary }),
			code: eventgrid.EInvalidDestination, parts: []string{"contentMode Binary needs eventDeliverySchema CloudEventSchemaV1_0"}},
		{name: "BinaryCustom", schema: eventgrid.CustomEventSchema, edit: dst(func(d *eventgrid.Destination) { d.ContentMode = eventgrid.ContentBinary }),
			code: eventgrid.EInvalidDestination, parts: []string{"CloudEventSchemaV1_0"}},
		{name: "StructuredWithMaxEvents", edit: dst(func(d *eventgrid.Destination) { d.ContentMode, d.MaxEventsPerBatch = eventgrid.ContentStructured, 10 }),
			code: eventgrid.EInvalidDelivery, parts: []string{field + "maxEventsPerBatch cannot be set with contentMode Structured"}},
		{name: "BinaryWithBatchSize", schema: eventgrid.CloudEventSchemaV1_0, edit: dst(func(d *eventgrid.Destination) {
			d.ContentMode, d.PreferredBatchSizeInKilobytes = eventgrid.ContentBinary, 64
		}),
			code: eventgrid.EInvalidDelivery, parts: []string{field + "preferredBatchSizeInKilobytes"}},
		{name: "BatchWithBatching", edit: dst(func(d *eventgrid.Destination) { d.ContentMode, d.MaxEventsPerBatch = eventgrid.ContentBatch, 10 })},
		{name: "UnknownContentMode", edit: dst(func(d *eventgrid.Destination) { d.ContentMode = "Stream" }), code: eventgrid.EInvalidDestination, parts: []string{"Batch, Structured and Binary"}},
		{name: "UnknownValidation", edit: dst(func(d *eventgrid.Destination) { d.Validation = "Manual" }), code: eventgrid.EInvalidDestination, parts: []string{"None, EventGrid and CloudEvents"}},
		{name: "Secret24", edit: dst(func(d *eventgrid.Destination) { d.SigningSecrets = []string{secret24} })},
		{name: "Secret64AndRotation", edit: dst(func(d *eventgrid.Destination) { d.SigningSecrets = []string{secret64, secret24} })},
		{name: "Secret23", edit: dst(func(d *eventgrid.Destination) { d.SigningSecrets = []string{secret23} }), code: eventgrid.EInvalidDestination, parts: []string{"signingSecret (secret 1 of 1)"}},
		{name: "Secret65", edit: dst(func(d *eventgrid.Destination) { d.SigningSecrets = []string{secret24, secret65} }), code: eventgrid.EInvalidDestination, parts: []string{"signingSecret (secret 2 of 2)"}},
		{name: "SecretNoPrefix", edit: dst(func(d *eventgrid.Destination) { d.SigningSecrets = []string{strings.TrimPrefix(secret24, "whsec_")} }),
			code: eventgrid.EInvalidDestination, parts: []string{"whsec_"}},
		{name: "SecretNotBase64", edit: dst(func(d *eventgrid.Destination) {
			d.SigningSecrets = []string{"whsec_not*base64*at*all*not*base64*at*all"}
		}),
			code: eventgrid.EInvalidDestination, parts: []string{"base64"}},
		{name: "TooManySecrets", edit: dst(func(d *eventgrid.Destination) {
			d.SigningSecrets = []string{secret24, secret24, secret24, secret24, secret24}
		}),
			code: eventgrid.EInvalidDestination, parts: []string{"at most 4"}},
	})
}

func TestDestinationRules_EventGrid(t *testing.T) {
	const field = "properties.destination.properties."
	eg := func() eventgrid.Destination {
		return eventgrid.Destination{EndpointType: eventgrid.EventGrid, EndpointURL: egURL, SASKey: "k"}
	}
	lenient := func(o *registry.Options) { o.EventGridHTTPSOnly, o.EventGridAllowInvalidHostnames = false, true }
	skip := func(o *registry.Options) { o.SkipEventGridURLValidation = true }
	checkRules(t, eg, []ruleCase{
		{name: "Valid"},
		{name: "China", edit: withURL("https://x.chinaeast-1.eventgrid.azure.cn./api/events?api-version=2018-01-01")},
		{name: "NoKey", edit: func(s *eventgrid.EventSubscription) { s.Destination.SASKey = "" },
			code: eventgrid.EInvalidDestination, parts: []string{field + "sasKey is required for an EventGrid destination."}},
		{name: "NoURL", edit: withURL(""), code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl is required."}},
		{name: "HTTP", edit: withURL(strings.Replace(egURL, "https", "http", 1)),
			code: eventgrid.EInvalidDestination, parts: []string{"outbound__eventgrid__httpsOnly is true"}},
		{name: "HTTPAllowed", opts: lenient, edit: withURL(strings.Replace(egURL, "https", "http", 1))},
		{name: "ForeignHost", edit: withURL("https://example.com/api/events?api-version=2018-01-01"),
			code: eventgrid.EInvalidDestination, parts: []string{`host "example.com" is not an Azure Event Grid host`}},
		{name: "ForeignHostAllowed", opts: lenient, edit: withURL("https://example.com/api/events?api-version=2018-01-01")},
		{name: "PlaceholderHost", edit: withURL("https://<topic>.<region>-1.eventgrid.azure.net/api/events?api-version=2018-01-01"),
			code: eventgrid.EInvalidDestination, parts: []string{field + "endpointUrl holds the placeholder <topic>: replace every placeholder with your own value."}},
		{name: "PlaceholderKey", edit: func(s *eventgrid.EventSubscription) { s.Destination.SASKey = "<user_topic_sas_key>" },
			code: eventgrid.EInvalidDestination, parts: []string{field + "sasKey holds the placeholder <user_topic_sas_key>: replace every placeholder with your own value."}},
		{name: "WrongPath", opts: lenient, edit: withURL("https://example.com/x?api-version=2018-01-01"),
			code: eventgrid.EInvalidDestination, parts: []string{"/api/events API", "api-version=2018-01-01"}},
		{name: "WrongVersion", edit: withURL(strings.Replace(egURL, "2018-01-01", "2020-01-01", 1)),
			code: eventgrid.EInvalidDestination, parts: []string{"api-version=2018-01-01"}},
		{name: "URLChecksSkipped", opts: skip, edit: withURL("https://example.com/x")},
		{name: "KeyStillRequiredWhenSkipped", opts: skip, edit: func(s *eventgrid.EventSubscription) {
			s.Destination.EndpointURL, s.Destination.SASKey = "https://example.com/x", ""
		},
			code: eventgrid.EInvalidDestination, parts: []string{"sasKey is required"}},
		{name: "Structured", edit: func(s *eventgrid.EventSubscription) { s.Destination.ContentMode = eventgrid.ContentStructured },
			code: eventgrid.EInvalidDestination, parts: []string{"contentMode Structured applies to WebHook destinations only"}},
		{name: "Validation", edit: func(s *eventgrid.EventSubscription) { s.Destination.Validation = eventgrid.ValidationEventGrid },
			code: eventgrid.EInvalidDestination, parts: []string{"validation EventGrid applies to WebHook destinations only."}},
		{name: "Signed", edit: func(s *eventgrid.EventSubscription) { s.Destination.SigningSecrets = []string{secret24} },
			code: eventgrid.EInvalidDestination, parts: []string{"signingSecret applies to WebHook destinations only."}},
	})
}

func TestDestinationRules_EdgeHub(t *testing.T) {
	const field = "properties.destination.properties."
	available := func(o *registry.Options) { o.EdgeHubAvailable = true }
	edgeHub := func() eventgrid.Destination {
		return eventgrid.Destination{EndpointType: eventgrid.EdgeHub, OutputName: "sampleSub4"}
	}
	output := func(name string) func(*eventgrid.EventSubscription) {
		return func(s *eventgrid.EventSubscription) { s.Destination.OutputName = name }
	}
	attrs := func(a ...eventgrid.DeliveryAttribute) func(*eventgrid.EventSubscription) {
		return func(s *eventgrid.EventSubscription) { s.Destination.DeliveryAttributes = a }
	}
	checkRules(t, edgeHub, []ruleCase{
		{name: "Valid", opts: available},
		{name: "Batching", opts: available, edit: func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 10 }},
		{name: "OutsideIoTEdge", code: eventgrid.EInvalidDestination, parts: []string{"properties.destination.endpointType EdgeHub cannot be used here", "IoT Edge runtime", "IOTEDGE_WORKLOADURI", "edgehub__mqttUrl"}},
		{name: "NoOutput", opts: available, edit: output(""), code: eventgrid.EInvalidDestination, parts: []string{field + "outputName is required for an EdgeHub destination."}},
		{name: "Slash", opts: available, edit: output("a/b"), code: eventgrid.EInvalidDestination, parts: []string{field + "outputName must be 1 to 256 characters"}},
		{name: "Wildcard", opts: available, edit: output("a#"), code: eventgrid.EInvalidDestination, parts: []string{"outputName"}},
		{name: "Long", opts: available, edit: output(strings.Repeat("o", 257)), code: eventgrid.EInvalidDestination, parts: []string{"outputName"}},
		{name: "SystemProperty", opts: available, edit: attrs(eventgrid.DeliveryAttribute{Name: "$.ct", Type: "Static", Value: "x"}),
			code: eventgrid.EInvalidDestination, parts: []string{field + "deliveryAttributeMappings[0].name must not start with '$'"}},
		{name: "SpacesAndWildcardsInProperties", opts: available, edit: func(s *eventgrid.EventSubscription) {
			s.Destination.OutputName = "out put"
			s.Destination.DeliveryAttributes = []eventgrid.DeliveryAttribute{{Name: "a+b", Type: "Static", Value: "#\x00 x"}}
		}},
		{name: "TopicTooLong", opts: available, edit: attrs(eventgrid.DeliveryAttribute{Name: "big", Type: "Static", Value: strings.Repeat(" ", 30000)}),
			code: eventgrid.EInvalidDestination, parts: []string{field + "deliveryAttributeMappings cannot be sent to edgeHub", "65535"}},
		{name: "Structured", opts: available, edit: func(s *eventgrid.EventSubscription) { s.Destination.ContentMode = eventgrid.ContentStructured },
			code: eventgrid.EInvalidDestination, parts: []string{"an EdgeHub destination receives a JSON array"}},
	})
}

// TestDestinationRules_Entity covers the three types that share a rule:
// EventHub, ServiceBusQueue and ServiceBusTopic.
func TestDestinationRules_Entity(t *testing.T) {
	const field = "properties.destination.properties."
	for _, typ := range []eventgrid.EndpointType{eventgrid.EventHub, eventgrid.ServiceBusQueue, eventgrid.ServiceBusTopic} {
		t.Run(string(typ), func(t *testing.T) {
			entity := func() eventgrid.Destination {
				return eventgrid.Destination{EndpointType: typ, ConnectionString: entityCS}
			}
			cs := func(s string) func(*eventgrid.EventSubscription) {
				return func(sub *eventgrid.EventSubscription) { sub.Destination.ConnectionString = s }
			}
			checkRules(t, entity, []ruleCase{
				{name: "Valid"},
				{name: "Batching", edit: func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 5 }},
				{name: "Properties", edit: func(s *eventgrid.EventSubscription) {
					s.Destination.DeliveryAttributes = []eventgrid.DeliveryAttribute{{Name: "p", Type: "Static", Value: "v"}}
				}},
				{name: "NoConnectionString", edit: cs(""), code: eventgrid.EInvalidDestination,
					parts: []string{field + "connectionString is required for endpointType " + string(typ) + "."}},
				{name: "NamespaceScoped", edit: cs(strings.TrimSuffix(entityCS, ";EntityPath=hub")), code: eventgrid.EInvalidDestination,
					parts: []string{field + "connectionString", "EntityPath"}},
				{name: "Malformed", edit: cs("sb://" + accountKey), code: eventgrid.EInvalidDestination, parts: []string{field + "connectionString"}},
				{name: "Placeholders", edit: cs("Endpoint=sb://<namespace>.servicebus.windows.net/;SharedAccessKeyName=<policy>;SharedAccessKey=<key>;EntityPath=<queue>"),
					code: eventgrid.EInvalidDestination, parts: []string{field + "connectionString holds the placeholder <namespace>: replace every placeholder with your own value."}},
				{name: "WholePlaceholder", edit: cs("<your-event-hub-connection-string>"),
					code: eventgrid.EInvalidDestination, parts: []string{field + "connectionString holds the placeholder <your-event-hub-connection-string>"}},
				{name: "TooManyEvents", edit: func(s *eventgrid.EventSubscription) { s.Destination.MaxEventsPerBatch = 51 },
					code: eventgrid.EInvalidDelivery, parts: []string{field + "maxEventsPerBatch must be between 1 and 50; got 51."}},
				{name: "Signed", edit: func(s *eventgrid.EventSubscription) { s.Destination.SigningSecrets = []string{secret24} },
					code: eventgrid.EInvalidDestination, parts: []string{"signingSecret applies to WebHook destinations only."}},
			})
		})
	}
}

func TestDestinationRules_StorageQueue(t *testing.T) {
	const field = "properties.destination.properties."
	queue := func() eventgrid.Destination {
		return eventgrid.Destination{EndpointType: eventgrid.StorageQueue, ConnectionString: storageCS, QueueName: "events"}
	}
	ttl := func(n int) func(*eventgrid.EventSubscription) {
		return func(s *eventgrid.EventSubscription) { s.Destination.QueueMessageTTLSeconds = &n }
	}
	name := func(n string) func(*eventgrid.EventSubscription) {
		return func(s *eventgrid.EventSubscription) { s.Destination.QueueName = n }
	}
	const ttlMessage = field + "queueMessageTimeToLiveInSeconds must be -1 (never expires) or 1 to 604800 seconds."
	checkRules(t, queue, []ruleCase{
		{name: "Valid"},
		{name: "NeverExpires", edit: ttl(-1)},
		{name: "OneSecond", edit: ttl(1)},
		{name: "SevenDays", edit: ttl(604800)},
		{name: "ZeroTTL", edit: ttl(0), code: eventgrid.EInvalidDestination, parts: []string{ttlMessage}},
		{name: "MinusTwo", edit: ttl(-2), code: eventgrid.EInvalidDestination, parts: []string{ttlMessage}},
		{name: "SevenDaysAndASecond", edit: ttl(604801), code: eventgrid.EInvalidDestination, parts: []string{ttlMessage}},
		{name: "NoConnectionString", edit: func(s *eventgrid.EventSubscription) { s.Destination.ConnectionString = "" },
			code: eventgrid.EInvalidDestination, parts: []string{field + "connectionString is required for a StorageQueue destination."}},
		{name: "NoAccountKey", edit: func(s *eventgrid.EventSubscription) { s.Destination.ConnectionString = "AccountName=edgestore" },
			code: eventgrid.EInvalidDestination, parts: []string{field + "connectionString has no AccountKey"}},
		{name: "EntityConnectionString", edit: func(s *eventgrid.EventSubscription) { s.Destination.ConnectionString = entityCS },
			code: eventgrid.EInvalidDestination, parts: []string{field + "connectionString has no AccountName."}},
		{name: "NoQueueName", edit: name(""), code: eventgrid.EInvalidDestination, parts: []string{field + "queueName is required."}},
		// The placeholders of docs/destinations.md and of the original
		// module's API reference.
		{name: "Placeholders", edit: func(s *eventgrid.EventSubscription) {
			s.Destination.ConnectionString = "DefaultEndpointsProtocol=https;AccountName=<account>;AccountKey=<key>;EndpointSuffix=core.windows.net"
		}, code: eventgrid.EInvalidDestination, parts: []string{field + "connectionString holds the placeholder <account>: replace every placeholder with your own value."}},
		{name: "WholePlaceholder", edit: func(s *eventgrid.EventSubscription) {
			s.Destination.ConnectionString = "<your-storage-account-connection-string>"
		}, code: eventgrid.EInvalidDestination, parts: []string{field + "connectionString holds the placeholder <your-storage-account-connection-string>"}},
		{name: "PlaceholderQueueName", edit: name("<your-storage-queue-name>"), code: eventgrid.EInvalidDestination,
			parts: []string{field + "queueName holds the placeholder <your-storage-queue-name>: replace every placeholder with your own value."}},
		{name: "ShortQueueName", edit: name("ab"), code: eventgrid.EInvalidDestination, parts: []string{field + "queueName must be 3 to 63 characters long."}},
		{name: "UpperCaseQueueName", edit: name("Bad_Queue"), code: eventgrid.EInvalidDestination, parts: []string{field + "queueName may hold only lower-case letters"}},
		{name: "DoubleHyphen", edit: name("a--b"), code: eventgrid.EInvalidDestination, parts: []string{"queueName"}},
		{name: "Properties", edit: func(s *eventgrid.EventSubscription) {
			s.Destination.DeliveryAttributes = []eventgrid.DeliveryAttribute{{Name: "p", Type: "Static", Value: "v"}}
		}, code: eventgrid.EInvalidDestination, parts: []string{field + "deliveryAttributeMappings are not supported for a StorageQueue destination"}},
		{name: "Structured", edit: func(s *eventgrid.EventSubscription) { s.Destination.ContentMode = eventgrid.ContentStructured },
			code: eventgrid.EInvalidDestination, parts: []string{"applies to WebHook destinations only"}},
	})
}

// An endpoint type without a rule is refused, naming the supported ones.
func TestDestinationRules_UnknownType(t *testing.T) {
	valid := func() eventgrid.Destination {
		return eventgrid.Destination{EndpointType: eventgrid.StorageBlob}
	}
	checkRules(t, valid, []ruleCase{
		{name: "StorageBlob", code: eventgrid.EInvalidDestination, parts: []string{`properties.destination.endpointType "StorageBlob" is not supported`, "StorageQueue."}},
		{name: "Empty", edit: func(s *eventgrid.EventSubscription) { s.Destination.EndpointType = "" }, code: eventgrid.EInvalidDestination},
	})
}
