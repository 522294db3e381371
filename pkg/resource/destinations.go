package resource

import "github.com/edgegrid/edgegrid/pkg/eventgrid"

// decodeTypeMembers reads the members that belong to d's endpoint type,
// one case per type (their names are in destinationMembers). It only
// reads: whether what they hold is acceptable is for the registry's rule
// of the type to decide (docs/design.md#adding-a-destination). Connection
// strings are secrets: no error text holds one. A secret left out for the
// read-only members GET shows in its place is recorded for kept.
func decodeTypeMembers(p object, d *eventgrid.Destination, k *kept) error {
	var err error
	switch d.EndpointType {
	case eventgrid.WebHook:
		err = decodeURL(p, d, k)
	case eventgrid.EventGrid:
		if err = decodeURL(p, d, k); err == nil {
			err = decodeEventGrid(p, d, k)
		}
	case eventgrid.EdgeHub:
		d.OutputName, _, err = p.str(eventgrid.EInvalidDestination, "outputName")
	case eventgrid.EventHub, eventgrid.ServiceBusQueue, eventgrid.ServiceBusTopic:
		if d.ConnectionString, _, err = p.str(eventgrid.EInvalidDestination, "connectionString"); err == nil {
			k.target, err = standIns(p, "namespace", "entityPath")
		}
	case eventgrid.StorageQueue:
		err = decodeStorageQueue(p, d, k)
	}
	return err
}

// decodeURL reads the endpointUrl of a WebHook or EventGrid destination. It
// records a URL left out for endpointBaseUrl for kept.
func decodeURL(p object, d *eventgrid.Destination, k *kept) error {
	var err error
	if d.EndpointURL, _, err = p.str(eventgrid.EInvalidDestination, "endpointUrl"); err != nil {
		return err
	}
	if d.EndpointURL == "" {
		k.baseURL, _, err = p.str(eventgrid.EInvalidDestination, "endpointBaseUrl")
	}
	return err
}

// decodeEventGrid reads an EventGrid destination's sasKey and topicName,
// and records a sasKey left out for kept.
func decodeEventGrid(p object, d *eventgrid.Destination, k *kept) error {
	var err error
	if d.SASKey, _, err = p.str(eventgrid.EInvalidDestination, "sasKey"); err != nil {
		return err
	}
	k.sasKey = !p.has("sasKey")
	d.TopicName, _, err = p.str(eventgrid.EInvalidDestination, "topicName")
	return err
}

// decodeStorageQueue reads a StorageQueue destination
// (docs/design.md#storagequeue-destination): connectionString, or the
// read-only members GET shows in its place, queueName and
// queueMessageTimeToLiveInSeconds, an integer.
func decodeStorageQueue(p object, d *eventgrid.Destination, k *kept) error {
	var err error
	if d.ConnectionString, _, err = p.str(eventgrid.EInvalidDestination, "connectionString"); err != nil {
		return err
	}
	if k.target, err = standIns(p, "accountName", "queueEndpoint"); err != nil {
		return err
	}
	if d.QueueName, _, err = p.str(eventgrid.EInvalidDestination, "queueName"); err != nil {
		return err
	}
	raw, name, ok := p.get("queueMessageTimeToLiveInSeconds")
	if !ok {
		return nil
	}
	if err := notString(eventgrid.EInvalidDestination, p.field(name), raw); err != nil {
		return err
	}
	ttl, ok := parseInt(raw)
	if !ok {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s must be -1 (never expires) or 1 to 604800 seconds.", p.field(name))
	}
	d.QueueMessageTTLSeconds = &ttl
	return nil
}
