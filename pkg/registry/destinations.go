package registry

import (
	"strings"
	"unicode/utf8"

	"github.com/edgegrid/edgegrid/pkg/azconn"
	"github.com/edgegrid/edgegrid/pkg/edgehub/mqtttopic"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// maxOutputNameLength bounds an EdgeHub output name.
const maxOutputNameLength = 256

// EdgeHubUnavailable is the reason given when an EdgeHub destination is put
// while the broker has no way to reach edgeHub.
const EdgeHubUnavailable = "EdgeHub destinations need the IoT Edge runtime (IOTEDGE_WORKLOADURI, " +
	"IOTEDGE_GATEWAYHOSTNAME, IOTEDGE_IOTHUBHOSTNAME, IOTEDGE_DEVICEID, IOTEDGE_MODULEID and IOTEDGE_MODULEGENERATIONID) " +
	"or an MQTT endpoint set with edgehub__mqttUrl, edgehub__deviceId and edgehub__moduleId"

// validateBrokerDestination checks the destinations that deliver to other
// message brokers. handled is false for other types. No error text holds a
// connection string.
func (o Options) validateBrokerDestination(d *eventgrid.Destination) (handled bool, err error) {
	const field = "properties.destination.properties."
	switch d.EndpointType {
	case eventgrid.EdgeHub:
		if !o.EdgeHubAvailable {
			return true, eventgrid.Errorf(eventgrid.EInvalidDestination, "properties.destination.endpointType EdgeHub cannot be used here: %s.", EdgeHubUnavailable)
		}
		if d.OutputName == "" {
			return true, eventgrid.Errorf(eventgrid.EInvalidDestination, field+"outputName is required for an EdgeHub destination.")
		}
		if !validOutputName(d.OutputName) {
			return true, eventgrid.Errorf(eventgrid.EInvalidDestination, field+"outputName must be 1 to %d characters, without '/', '#', '+' or control characters.", maxOutputNameLength)
		}
		for i, a := range d.DeliveryAttributes {
			if strings.HasPrefix(a.Name, "$") {
				return true, eventgrid.Errorf(eventgrid.EInvalidDestination, "properties.destination.properties.deliveryAttributeMappings[%d].name must not start with '$': edgeHub reserves those for system properties.", i)
			}
		}
		if err := checkEdgeHubTopic(d); err != nil {
			return true, err
		}
	case eventgrid.EventHub, eventgrid.ServiceBusQueue, eventgrid.ServiceBusTopic:
		if d.ConnectionString == "" {
			return true, eventgrid.Errorf(eventgrid.EInvalidDestination, field+"connectionString is required for a %s destination.", d.EndpointType)
		}
		if _, err := azconn.ParseEntity(d.ConnectionString); err != nil {
			return true, eventgrid.Errorf(eventgrid.EInvalidDestination, field+"connectionString %v (want Endpoint=sb://<namespace>/;SharedAccessKeyName=…;SharedAccessKey=…;EntityPath=<entity>).", err)
		}
	case eventgrid.StorageQueue:
		// Decoding checked the connection string, queue name and time to
		// live; custom properties have nowhere to go in a queue message.
		if len(d.DeliveryAttributes) > 0 {
			return true, eventgrid.Errorf(eventgrid.EInvalidDestination, field+"deliveryAttributeMappings are not supported for a StorageQueue destination: a queue message has no properties.")
		}
	default:
		return false, nil
	}
	return true, nil
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
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "properties.destination.properties.outputName cannot be sent to edgeHub: %v.", err)
	}
	if err := mqtttopic.Check(mqtttopic.ModuleOutput(id, id, d.OutputName, props...)); err != nil {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "properties.destination.properties.deliveryAttributeMappings cannot be sent to edgeHub: %v.", err)
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
