package resource

import (
	"strings"

	"github.com/edgegrid/edgegrid/pkg/azconn"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// decodeDeadLetter reads deadLetterDestination
// (docs/design.md#dead-lettering): a StorageBlob container
// named by blobContainerName in the account of connectionString. A
// resourceId alone cannot be resolved at the edge, so it is refused.
func decodeDeadLetter(o object, k *kept) (*eventgrid.DeadLetterDestination, error) {
	raw, name, ok := o.get("deadLetterDestination")
	if !ok {
		return nil, nil
	}
	d, err := parseObject(raw, o.field(name), eventgrid.EInvalidDestination)
	if err != nil {
		return nil, err
	}
	if err := d.check(deadLetterShape); err != nil {
		return nil, err
	}
	typ, ok, err := d.str(eventgrid.EInvalidDestination, "endpointType")
	if err != nil {
		return nil, err
	}
	if !ok || !strings.EqualFold(strings.TrimSpace(typ), string(eventgrid.StorageBlob)) {
		return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s must be StorageBlob, the only dead-letter destination there is.", d.field("endpointType"))
	}
	propsRaw, _, _ := d.get("properties")
	p, err := parseObject(propsRaw, d.field("properties"), eventgrid.EInvalidDestination)
	if err != nil {
		return nil, err
	}
	if err := p.check(deadLetterPropertiesShape); err != nil {
		return nil, err
	}
	dl := &eventgrid.DeadLetterDestination{EndpointType: eventgrid.StorageBlob}
	if dl.ContainerName, _, err = p.str(eventgrid.EInvalidDestination, "blobContainerName"); err != nil {
		return nil, err
	}
	if dl.ConnectionString, _, err = p.str(eventgrid.EInvalidDestination, "connectionString"); err != nil {
		return nil, err
	}
	k.deadLetter = p.path
	if k.deadLetterTarget, err = standIns(p, "accountName", "blobEndpoint"); err != nil {
		return nil, err
	}
	switch {
	case dl.ConnectionString == "" && k.deadLetterTarget == nil:
		return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s is required.", p.field("connectionString"))
	case dl.ConnectionString != "":
		if ph, ok := azconn.Placeholder(dl.ConnectionString); ok {
			return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s holds the placeholder %s: replace every placeholder with your own value.", p.field("connectionString"), ph)
		}
		if _, err := azconn.ParseStorage(dl.ConnectionString); err != nil {
			// The error says what is missing, never what is there.
			return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %s.", p.field("connectionString"), err.Error())
		}
	}
	if msg := azconn.StorageNameProblem(dl.ContainerName); msg != "" {
		return nil, eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %s.", p.field("blobContainerName"), msg)
	}
	return dl, nil
}
