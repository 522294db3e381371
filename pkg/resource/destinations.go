package resource

import (
	"github.com/edgegrid/edgegrid/pkg/azconn"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// decodeBrokerDestination reads the properties of the destinations that
// deliver to other message brokers: EdgeHub (outputName) and EventHub,
// ServiceBusQueue and ServiceBusTopic (connectionString). It leaves other
// types alone. The connection string is a secret: no error text holds it.
// One left out for the read-only members GET shows in its place is
// recorded for kept.
func decodeBrokerDestination(p object, d *eventgrid.Destination, k *kept) error {
	var err error
	switch d.EndpointType {
	case eventgrid.EdgeHub:
		d.OutputName, _, err = p.str(eventgrid.EInvalidDestination, "outputName")
	case eventgrid.EventHub, eventgrid.ServiceBusQueue, eventgrid.ServiceBusTopic:
		if d.ConnectionString, _, err = p.str(eventgrid.EInvalidDestination, "connectionString"); err == nil {
			k.target, err = standIns(p, "namespace", "entityPath")
		}
	case eventgrid.StorageQueue:
		return decodeStorageQueue(p, d, k)
	}
	return err
}

// decodeStorageQueue reads a StorageQueue destination
// (docs/design.md#storagequeue-destination): an account-level
// connectionString, queueName and the optional
// queueMessageTimeToLiveInSeconds (-1: never expires; else 1 to 7 days).
func decodeStorageQueue(p object, d *eventgrid.Destination, k *kept) error {
	var err error
	if d.ConnectionString, _, err = p.str(eventgrid.EInvalidDestination, "connectionString"); err != nil {
		return err
	}
	if k.target, err = standIns(p, "accountName", "queueEndpoint"); err != nil {
		return err
	}
	switch {
	case d.ConnectionString == "" && k.target == nil:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s is required for a StorageQueue destination.", p.field("connectionString"))
	case d.ConnectionString != "":
		if _, err := azconn.ParseStorage(d.ConnectionString); err != nil {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %s.", p.field("connectionString"), err.Error())
		}
	}
	if d.QueueName, _, err = p.str(eventgrid.EInvalidDestination, "queueName"); err != nil {
		return err
	}
	if msg := queueNameProblem(d.QueueName); msg != "" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %s.", p.field("queueName"), msg)
	}
	if raw, name, ok := p.get("queueMessageTimeToLiveInSeconds"); ok {
		if err := notString(eventgrid.EInvalidDestination, p.field(name), raw); err != nil {
			return err
		}
		ttl, ok := parseInt(raw)
		if !ok && string(raw) == "-1" {
			ttl, ok = -1, true
		}
		if !ok || (ttl != -1 && (ttl < 1 || ttl > 7*24*3600)) {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s must be -1 (never expires) or 1 to 604800 seconds.", p.field(name))
		}
		d.QueueMessageTTLSeconds = ttl
	}
	return nil
}

// queueNameProblem checks Azure's queue naming rules, which are those of
// containers.
func queueNameProblem(n string) string { return containerNameProblem(n) }
