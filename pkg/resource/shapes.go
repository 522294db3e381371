package resource

import "github.com/edgegrid/edgegrid/pkg/eventgrid"

// The members of every object of a topic or subscription body
// (docs/api.md#members). Names are matched ignoring case; the first
// spelling listed is the documented one. Besides what edgegrid documents,
// the lists hold the aliases and every member the original module's
// documentation and manifests use.

// Why the members of cloud Event Grid's API that edgegrid does not
// implement are refused.
const (
	noIdentity = "managed identities do not exist at the edge; name the destination with its connectionString or URL"
	noResource = "a resourceId names an Azure resource, which nothing at the edge can resolve; give the connectionString instead"
	noCloud    = "it is a setting of cloud Event Grid's resources, which edgegrid has no counterpart for"
)

var (
	topicShape = newShape(shapeSpec{
		names:      []string{"name", "properties"},
		readOnly:   []string{"systemData"},
		readOnlyOf: []any{Topic{}},
		unsupported: map[string]string{
			"location":         "edgegrid serves its topics where it runs; they have no Azure region",
			"tags":             "topics have no tags here",
			"sku":              "edgegrid has no pricing tiers",
			"identity":         noIdentity,
			"kind":             "edgegrid serves its topics where it runs; they have no Azure kind",
			"extendedLocation": "edgegrid serves its topics where it runs; they have no Azure location",
		},
	})
	topicPropertiesShape = newShape(shapeSpec{
		names:      []string{"inputSchema"},
		readOnly:   []string{"provisioningState", "metricResourceId", "privateEndpointConnections"},
		readOnlyOf: []any{TopicProperties{}},
		unsupported: map[string]string{
			"inputSchemaMapping":       "edgegrid does not map custom events to EventGridSchema; use CustomEventSchema and advanced filters on any key",
			"publicNetworkAccess":      "choose the listeners with inbound__serverAuth__tlsPolicy and api__bindAddress (docs/configuration.md)",
			"inboundIpRules":           "choose the listeners with inbound__serverAuth__tlsPolicy and api__bindAddress (docs/configuration.md)",
			"disableLocalAuth":         "inbound authentication is configured for the whole broker with inbound__clientAuth__… (docs/security.md)",
			"minimumTlsVersionAllowed": "the listeners' TLS settings are the broker's (docs/security.md)",
			"dataResidencyBoundary":    noCloud,
			"eventTypeInfo":            noCloud,
		},
	})

	subscriptionShape = newShape(shapeSpec{
		names:      []string{"name", "properties"},
		readOnly:   []string{"systemData"},
		readOnlyOf: []any{Subscription{}},
	})
	subscriptionPropertiesShape         = newShape(subscriptionProperties(false))
	declaredSubscriptionPropertiesShape = newShape(subscriptionProperties(true))

	retryPolicyShape = newShape(shapeSpec{
		names:      []string{"maxDeliveryAttempts", "eventExpiryInMinutes", "eventTimeToLiveInMinutes", "schedule"},
		readOnlyOf: []any{RetryPolicy{}},
	})
	persistencePolicyShape = newShape(shapeSpec{names: []string{"isPersisted"}})
	deliveryPolicyShape    = newShape(shapeSpec{names: []string{"maxEventsPerBatch", "approxBatchSizeInBytes"}})

	filterShape = newShape(shapeSpec{
		names: []string{"includedEventTypes", "eventTypes", "subjectBeginsWith", "subjectEndsWith",
			"isSubjectCaseSensitive", "advancedFilters", "enableAdvancedFilteringOnArrays"},
		readOnlyOf: []any{Filter{}},
	})
	advancedFilterShape = newShape(shapeSpec{
		names:      []string{"operatorType", "key", "value", "values"},
		readOnlyOf: []any{AdvancedFilter{}},
	})

	destinationShape = newShape(shapeSpec{names: []string{"endpointType", "properties"}})

	deliveryAttributeShape = newShape(shapeSpec{names: []string{"name", "type", "properties"}})
	staticAttributeShape   = newShape(shapeSpec{
		names:     []string{"value", "isSecret"},
		misplaced: map[string]string{"sourceField": "it applies to Dynamic mappings, not Static"},
	})
	dynamicAttributeShape = newShape(shapeSpec{
		names: []string{"sourceField"},
		misplaced: map[string]string{
			"value":    "it applies to Static mappings, not Dynamic",
			"isSecret": "it applies to Static mappings, not Dynamic",
		},
	})

	deadLetterShape           = newShape(shapeSpec{names: []string{"endpointType", "properties"}})
	deadLetterPropertiesShape = newShape(shapeSpec{
		names:       []string{"blobContainerName", "connectionString"},
		readOnly:    []string{"accountName", "blobEndpoint"},
		unsupported: map[string]string{"resourceId": noResource},
	})

	deliveryConfigurationShape = newShape(shapeSpec{
		names:       []string{"deliveryMode", "queue"},
		unsupported: map[string]string{"push": "a push subscription names its destination in properties.destination"},
	})
	queueShape = newShape(shapeSpec{
		names:       []string{"receiveLockDurationInSeconds", "maxDeliveryCount", "eventTimeToLive", "deadLetterDestination"},
		readOnlyOf:  []any{QueueInfo{}},
		unsupported: map[string]string{"deadLetterDestinationWithResourceIdentity": "managed identities do not exist at the edge; give deadLetterDestination with the storage account's connectionString"},
	})
	filtersConfigurationShape = newShape(shapeSpec{names: []string{"includedEventTypes", "filters"}})
)

// destinationMembers are the members each kind of destination reads from
// its properties, besides the ones every kind reads.
var destinationMembers = map[eventgrid.EndpointType][]string{
	eventgrid.WebHook:         {"endpointUrl"},
	eventgrid.EventGrid:       {"endpointUrl", "sasKey", "topicName"},
	eventgrid.EdgeHub:         {"outputName"},
	eventgrid.EventHub:        {"connectionString"},
	eventgrid.ServiceBusQueue: {"connectionString"},
	eventgrid.ServiceBusTopic: {"connectionString"},
	eventgrid.StorageQueue:    {"connectionString", "queueName", "queueMessageTimeToLiveInSeconds"},
}

// commonDestinationMembers are read for every kind; the registry refuses
// what a kind cannot do with them, such as a signingSecret anywhere but in a
// WebHook.
var commonDestinationMembers = []string{"maxEventsPerBatch", "preferredBatchSizeInKilobytes", "eventDeliverySchema",
	"deliveryAttributeMappings", "contentMode", "validation", "signingSecret"}

// destinationReadOnly are the members GET returns in place of a
// destination's secrets (docs/api.md#secrets).
var destinationReadOnly = map[eventgrid.EndpointType][]string{
	eventgrid.WebHook:         {"endpointBaseUrl"},
	eventgrid.EventGrid:       {"endpointBaseUrl"},
	eventgrid.EventHub:        {"namespace", "entityPath"},
	eventgrid.ServiceBusQueue: {"namespace", "entityPath"},
	eventgrid.ServiceBusTopic: {"namespace", "entityPath"},
	eventgrid.StorageQueue:    {"accountName", "queueEndpoint"},
}

// destinationShapes are the shapes of each kind's destination properties.
// A member another kind reads is refused naming the kinds it belongs to.
var destinationShapes = func() map[eventgrid.EndpointType]*shape {
	owners := ownersOf(destinationMembers)
	aad := map[string]string{
		"azureActiveDirectoryTenantId":           "Microsoft Entra ID tokens are not sent from the edge; send a secret header with deliveryAttributeMappings or sign deliveries with signingSecret",
		"azureActiveDirectoryApplicationIdOrUri": "Microsoft Entra ID tokens are not sent from the edge; send a secret header with deliveryAttributeMappings or sign deliveries with signingSecret",
		"minimumTlsVersionAllowed":               "outbound TLS settings are the broker's (docs/security.md)",
	}
	shapes := map[eventgrid.EndpointType]*shape{}
	for kind, own := range destinationMembers {
		spec := shapeSpec{
			names:       append(append([]string{}, own...), commonDestinationMembers...),
			readOnly:    destinationReadOnly[kind],
			unsupported: map[string]string{"resourceId": noResource},
			misplaced:   map[string]string{},
		}
		for name, kinds := range owners {
			spec.misplaced[name] = notHere(kinds, kind)
		}
		if kind == eventgrid.WebHook || kind == eventgrid.EventGrid {
			for n, why := range aad {
				spec.unsupported[n] = why
			}
		}
		shapes[kind] = newShape(spec)
	}
	return shapes
}()

// subscriptionProperties is the shape of a subscription's properties: over
// the REST API, or, when declared, in a declaration, which may also state
// paused (docs/live-config.md#the-declaration).
func subscriptionProperties(declared bool) shapeSpec {
	spec := shapeSpec{
		names: []string{"topic", "topicName", "eventDeliverySchema", "destination", "filter", "retryPolicy",
			"deadLetterDestination", "persistencePolicy", "deliveryPolicy", "deliveryConfiguration", "filtersConfiguration"},
		readOnly:   []string{"provisioningState"},
		readOnlyOf: []any{SubscriptionProperties{}},
		unsupported: map[string]string{
			"expirationTimeUtc":              "subscriptions do not expire here; delete the subscription when it is no longer wanted",
			"labels":                         "subscriptions have no labels here",
			"deliveryWithResourceIdentity":   noIdentity,
			"deadLetterWithResourceIdentity": "managed identities do not exist at the edge; give deadLetterDestination with the storage account's connectionString",
		},
		misplaced: map[string]string{
			"endpointType":                  "it belongs in properties.destination",
			"endpointUrl":                   "it belongs in properties.destination.properties",
			"maxEventsPerBatch":             "it belongs in properties.destination.properties",
			"preferredBatchSizeInKilobytes": "it belongs in properties.destination.properties",
			"includedEventTypes":            "it belongs in properties.filter",
			"subjectBeginsWith":             "it belongs in properties.filter",
			"subjectEndsWith":               "it belongs in properties.filter",
			"advancedFilters":               "it belongs in properties.filter",
			"maxDeliveryAttempts":           "it belongs in properties.retryPolicy",
			"eventExpiryInMinutes":          "it belongs in properties.retryPolicy",
			"eventTimeToLiveInMinutes":      "it belongs in properties.retryPolicy",
		},
	}
	if declared {
		spec.names = append(spec.names, "paused")
	} else {
		spec.unsupported["paused"] = "a subscription the REST API manages is paused with POST …/eventSubscriptions/{name}:pause and resumed with :resume (docs/api.md#actions); only a declaration states paused"
	}
	return spec
}
