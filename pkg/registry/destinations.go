package registry

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/edgegrid/edgegrid/pkg/azconn"
	"github.com/edgegrid/edgegrid/pkg/edgehub/mqtttopic"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// A destination's rules live here, one function per endpoint type
// (docs/design.md#adding-a-destination). Decoding (package resource) only
// reads the members a type has; everything about what they hold is checked
// by the type's rule, before a subscription is stored, whichever way it
// came (the REST API or a declaration). No error text holds a secret.

// destinationRule checks the destination of sub, a push subscription whose
// batching settings are already known to be within bounds.
type destinationRule func(o Options, sub *eventgrid.EventSubscription) error

// destinationRules holds the rule of every endpoint type a subscription can
// deliver to: a type without one cannot be stored.
var destinationRules = map[eventgrid.EndpointType]destinationRule{
	eventgrid.WebHook:         Options.checkWebHook,
	eventgrid.EventGrid:       Options.checkEventGrid,
	eventgrid.EdgeHub:         Options.checkEdgeHub,
	eventgrid.EventHub:        Options.checkEntity,
	eventgrid.ServiceBusQueue: Options.checkEntity,
	eventgrid.ServiceBusTopic: Options.checkEntity,
	eventgrid.StorageQueue:    Options.checkStorageQueue,
}

// destField is the path of a destination's properties in error messages.
const destField = "properties.destination.properties."

// validateDestination checks the batching settings every type shares, then
// the rule of sub's endpoint type.
func (o Options) validateDestination(sub *eventgrid.EventSubscription) error {
	d := &sub.Destination
	if d.MaxEventsPerBatch < 0 || d.MaxEventsPerBatch > o.MaxEventsPerBatch {
		return eventgrid.Errorf(eventgrid.EInvalidDelivery, destField+"maxEventsPerBatch must be between 1 and %d; got %d.", o.MaxEventsPerBatch, d.MaxEventsPerBatch)
	}
	if d.PreferredBatchSizeInKilobytes < 0 || d.PreferredBatchSizeInKilobytes > o.MaxPreferredBatchSizeKB {
		return eventgrid.Errorf(eventgrid.EInvalidDelivery, destField+"preferredBatchSizeInKilobytes must be between 1 and %d; got %d.", o.MaxPreferredBatchSizeKB, d.PreferredBatchSizeInKilobytes)
	}
	rule, ok := destinationRules[d.EndpointType]
	if !ok {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "properties.destination.endpointType %q is not supported; supported values are WebHook, EventGrid, EdgeHub, EventHub, ServiceBusQueue, ServiceBusTopic and StorageQueue.", d.EndpointType)
	}
	return rule(o, sub)
}

// checkWebHook: an absolute http or https URL (https only when
// outbound__webhook__httpsOnly), and the webhook interop properties
// (docs/design.md#webhook-interop).
func (o Options) checkWebHook(sub *eventgrid.EventSubscription) error {
	u, err := endpointURL(&sub.Destination)
	if err != nil {
		return err
	}
	if o.WebhookHTTPSOnly && u.Scheme != "https" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"endpointUrl must use https: outbound__webhook__httpsOnly is true.")
	}
	return checkWebhookInterop(sub)
}

// checkEventGrid: the /api/events URL of a cloud Event Grid topic (unless
// outbound__eventgrid__skipUrlValidation), and its SAS key.
func (o Options) checkEventGrid(sub *eventgrid.EventSubscription) error {
	d := &sub.Destination
	u, err := endpointURL(d)
	if err != nil {
		return err
	}
	if o.EventGridHTTPSOnly && u.Scheme != "https" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"endpointUrl must use https: outbound__eventgrid__httpsOnly is true.")
	}
	if !o.SkipEventGridURLValidation {
		if !strings.Contains(strings.ToLower(u.Path), "/api/events") || u.Query().Get("api-version") != "2018-01-01" {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"endpointUrl must target the /api/events API of Azure Event Grid in the cloud, with api-version=2018-01-01.")
		}
		if !o.EventGridAllowInvalidHostnames && !hasEventGridHost(u.Hostname()) {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"endpointUrl host %q is not an Azure Event Grid host (eventgrid.azure.net, eventgrid.azure.us, eventgrid.azure.cn); set outbound__eventgrid__allowInvalidHostnames=true to allow it.", u.Hostname())
		}
	}
	if d.SASKey == "" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"sasKey is required for an EventGrid destination.")
	}
	if err := placeholder("sasKey", d.SASKey); err != nil {
		return err
	}
	return notWebHook(d)
}

// EdgeHubUnavailable is the reason given when an EdgeHub destination is put
// while the broker has no way to reach edgeHub.
const EdgeHubUnavailable = "EdgeHub destinations need the IoT Edge runtime (IOTEDGE_WORKLOADURI, " +
	"IOTEDGE_GATEWAYHOSTNAME, IOTEDGE_IOTHUBHOSTNAME, IOTEDGE_DEVICEID, IOTEDGE_MODULEID and IOTEDGE_MODULEGENERATIONID) " +
	"or an MQTT endpoint set with edgehub__mqttUrl, edgehub__deviceId and edgehub__moduleId"

// maxOutputNameLength bounds an EdgeHub output name.
const maxOutputNameLength = 256

// checkEdgeHub: edgeHub must be reachable, and the output name and the
// delivery properties must make a topic edgeHub accepts.
func (o Options) checkEdgeHub(sub *eventgrid.EventSubscription) error {
	d := &sub.Destination
	if !o.EdgeHubAvailable {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "properties.destination.endpointType EdgeHub cannot be used here: %s.", EdgeHubUnavailable)
	}
	if d.OutputName == "" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"outputName is required for an EdgeHub destination.")
	}
	if !validOutputName(d.OutputName) {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"outputName must be 1 to %d characters, without '/', '#', '+' or control characters.", maxOutputNameLength)
	}
	for i, a := range d.DeliveryAttributes {
		if strings.HasPrefix(a.Name, "$") {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"deliveryAttributeMappings[%d].name must not start with '$': edgeHub reserves those for system properties.", i)
		}
	}
	if err := checkEdgeHubTopic(d); err != nil {
		return err
	}
	return notWebHook(d)
}

// checkEntity: an entity-scoped Event Hubs or Service Bus connection string.
func (o Options) checkEntity(sub *eventgrid.EventSubscription) error {
	d := &sub.Destination
	if d.ConnectionString == "" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"connectionString is required for endpointType %s.", d.EndpointType)
	}
	if err := placeholder("connectionString", d.ConnectionString); err != nil {
		return err
	}
	if _, err := azconn.ParseEntity(d.ConnectionString); err != nil {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"connectionString %v (want Endpoint=sb://<namespace>/;SharedAccessKeyName=…;SharedAccessKey=…;EntityPath=<entity>).", err)
	}
	return notWebHook(d)
}

// maxQueueMessageTTL is the longest time to live of a StorageQueue
// message other than -1 (never expires): seven days.
const maxQueueMessageTTL = 7 * 24 * 3600

// checkStorageQueue (docs/design.md#storagequeue-destination): an
// account-level connection string, a queue name Azure accepts, a time to
// live of -1 or 1 s to 7 days, and no custom properties, which a queue
// message has nowhere to put.
func (o Options) checkStorageQueue(sub *eventgrid.EventSubscription) error {
	d := &sub.Destination
	if d.ConnectionString == "" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"connectionString is required for a StorageQueue destination.")
	}
	if err := placeholder("connectionString", d.ConnectionString); err != nil {
		return err
	}
	if err := placeholder("queueName", d.QueueName); err != nil {
		return err
	}
	if _, err := azconn.ParseStorage(d.ConnectionString); err != nil {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"connectionString %s.", err.Error())
	}
	if msg := azconn.StorageNameProblem(d.QueueName); msg != "" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"queueName %s.", msg)
	}
	if ttl := d.QueueMessageTTLSeconds; ttl != nil && *ttl != -1 && (*ttl < 1 || *ttl > maxQueueMessageTTL) {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"queueMessageTimeToLiveInSeconds must be -1 (never expires) or 1 to 604800 seconds.")
	}
	if len(d.DeliveryAttributes) > 0 {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"deliveryAttributeMappings are not supported for a StorageQueue destination: a queue message has no properties.")
	}
	return notWebHook(d)
}

// endpointURL checks a WebHook or EventGrid destination's endpointUrl: an
// absolute http or https URL whose host and port can be connected to.
func endpointURL(d *eventgrid.Destination) (*url.URL, error) {
	if d.EndpointURL == "" {
		return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"endpointUrl is required.")
	}
	if err := placeholder("endpointUrl", d.EndpointURL); err != nil {
		return nil, err
	}
	u, err := url.Parse(d.EndpointURL)
	var ue *url.Error
	if errors.As(err, &ue) {
		return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"endpointUrl is not a valid URL: %v.", ue.Err)
	}
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"endpointUrl must be an absolute http or https URL.")
	}
	if msg := hostPortProblem(u); msg != "" {
		return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"endpointUrl %s.", msg)
	}
	return u, nil
}

// placeholder refuses the destination property field whose value v still
// holds a placeholder of an example (azconn.Placeholder), saying so in the
// same words for every kind of destination. A placeholder is no secret,
// so it is quoted even from a connection string.
func placeholder(field, v string) error {
	if p, ok := azconn.Placeholder(v); ok {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"%s holds the placeholder %s: "+replacePlaceholders, field, p)
	}
	return nil
}

// replacePlaceholders ends the message that refuses a value pasted from an
// example with its placeholders left in.
const replacePlaceholders = "replace every placeholder with your own value."

// notWebHook refuses the webhook interop properties on a destination of
// another type.
func notWebHook(d *eventgrid.Destination) error {
	switch {
	case d.ContentMode != "" && d.ContentMode != eventgrid.ContentBatch:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"contentMode %s applies to WebHook destinations only; an %s destination receives a JSON array.", d.ContentMode, d.EndpointType)
	case d.Validation != "" && d.Validation != eventgrid.ValidationNone:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"validation %s applies to WebHook destinations only.", d.Validation)
	case len(d.SigningSecrets) > 0:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"signingSecret applies to WebHook destinations only.")
	}
	return nil
}

// MaxSigningSecrets bounds the signing secrets of one destination: one
// signature per secret goes with every delivery, and rotation needs two.
const MaxSigningSecrets = 4

// checkWebhookInterop checks a WebHook's content mode, validation handshake
// and signing secrets.
func checkWebhookInterop(sub *eventgrid.EventSubscription) error {
	d := &sub.Destination
	switch d.ContentMode {
	case "", eventgrid.ContentBatch:
	case eventgrid.ContentStructured, eventgrid.ContentBinary:
		if d.MaxEventsPerBatch > 0 {
			return eventgrid.Errorf(eventgrid.EInvalidDelivery, destField+"maxEventsPerBatch cannot be set with contentMode %s, which sends one event per request.", d.ContentMode)
		}
		if d.PreferredBatchSizeInKilobytes > 0 {
			return eventgrid.Errorf(eventgrid.EInvalidDelivery, destField+"preferredBatchSizeInKilobytes cannot be set with contentMode %s, which sends one event per request.", d.ContentMode)
		}
		if d.ContentMode == eventgrid.ContentBinary && sub.EventDeliverySchema != eventgrid.CloudEventSchemaV1_0 {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"contentMode Binary needs eventDeliverySchema CloudEventSchemaV1_0, not %s; use Structured for one %s event per request.", sub.EventDeliverySchema, sub.EventDeliverySchema)
		}
	default:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"contentMode %q is not valid; accepted values are Batch, Structured and Binary.", d.ContentMode)
	}
	switch d.Validation {
	case "", eventgrid.ValidationNone, eventgrid.ValidationEventGrid, eventgrid.ValidationCloudEvents:
	default:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"validation %q is not valid; accepted values are None, EventGrid and CloudEvents.", d.Validation)
	}
	if len(d.SigningSecrets) > MaxSigningSecrets {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"signingSecret holds %d secrets; at most %d are allowed.", len(d.SigningSecrets), MaxSigningSecrets)
	}
	for i, s := range d.SigningSecrets {
		if !validSigningSecret(s) {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"signingSecret (secret %d of %d) must be whsec_ followed by the base64 of 24 to 64 random bytes.", i+1, len(d.SigningSecrets))
		}
	}
	return nil
}

// validSigningSecret reports whether s is a Standard Webhooks secret:
// "whsec_" and the standard base64 encoding of 24 to 64 bytes.
func validSigningSecret(s string) bool {
	key, ok := strings.CutPrefix(s, "whsec_")
	if !ok {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(key)
	return err == nil && len(b) >= 24 && len(b) <= 64
}

// maxEdgeHubID is the longest IoT Hub device or module id.
const maxEdgeHubID = 128

// checkEdgeHubTopic refuses an EdgeHub destination whose messages could
// never be published: the topic built from the output name and the static
// delivery properties, for the longest device and module ids, must be a
// valid MQTT PUBLISH topic. Dynamic values are checked as they are sent.
func checkEdgeHubTopic(d *eventgrid.Destination) error {
	var props []string
	for _, a := range d.DeliveryAttributes {
		if strings.EqualFold(a.Type, "Dynamic") {
			props = append(props, a.Name, "")
		} else {
			props = append(props, a.Name, a.Value)
		}
	}
	id := strings.Repeat("x", maxEdgeHubID)
	if err := mqtttopic.Check(mqtttopic.ModuleOutput(id, id, d.OutputName)); err != nil {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"outputName cannot be sent to edgeHub: %v.", err)
	}
	if err := mqtttopic.Check(mqtttopic.ModuleOutput(id, id, d.OutputName, props...)); err != nil {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, destField+"deliveryAttributeMappings cannot be sent to edgeHub: %v.", err)
	}
	return nil
}

func validOutputName(s string) bool {
	if s == "" || len(s) > maxOutputNameLength || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '/' || r == '#' || r == '+' {
			return false
		}
	}
	return true
}
