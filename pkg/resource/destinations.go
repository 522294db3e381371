package resource

import "github.com/edgegrid/edgegrid/pkg/eventgrid"

// decodeBrokerDestination reads the properties of the destinations that
// deliver to other message brokers: EdgeHub (outputName) and EventHub,
// ServiceBusQueue and ServiceBusTopic (connectionString). It leaves other
// types alone. The connection string is a secret: no error text holds it.
func decodeBrokerDestination(p object, d *eventgrid.Destination) error {
	var err error
	switch d.EndpointType {
	case eventgrid.EdgeHub:
		d.OutputName, _, err = p.str(eventgrid.EInvalidDestination, "outputName")
	case eventgrid.EventHub, eventgrid.ServiceBusQueue, eventgrid.ServiceBusTopic:
		d.ConnectionString, _, err = p.str(eventgrid.EInvalidDestination, "connectionString")
	}
	return err
}
