package resource

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/azconn"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// Secrets are never returned (docs/api.md#secrets): a destination's URL is
// shown as endpointBaseUrl, without its query; a connection string as the
// namespace and entity, or the account and endpoint, it names; a SAS key, a
// signing secret or a secret header value not at all. A PUT may leave a
// secret out and keep the one stored, so that a PUT of what GET returned
// changes nothing. The read-only members GET shows in a secret's place must
// then match what is stored; other secrets are kept only while the
// destination they are sent to stays the same.

// EndpointBaseURL returns u without the parts that may carry a secret: its
// query (Azure Functions and Logic Apps keep their keys there), its user
// information and its fragment. It returns "" for text that is not a URL.
func EndpointBaseURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}

// kept records what a body left out of the secrets GET does not return, and
// the read-only members it carried in their place.
type kept struct {
	// dest and deadLetter are the paths of the destination's and the
	// dead-letter destination's properties, for error messages.
	dest, deadLetter string
	// baseURL is the endpointBaseUrl of a destination given without an
	// endpointUrl.
	baseURL string
	// target holds the read-only members of a destination given without
	// its connectionString; nil when there is none.
	target map[string]string
	// deadLetterTarget is the same for the dead-letter destination.
	deadLetterTarget map[string]string
	// sasKey and signingSecret report that the member is absent (null
	// removes it).
	sasKey, signingSecret bool
	// attributes are the indexes of Static secret mappings given without
	// a value.
	attributes []int
}

// standIns returns the members of p, among names, that GET shows in place
// of a connection string, when p has no connection string; nil otherwise.
func standIns(p object, names ...string) (map[string]string, error) {
	if _, ok := rawjson.Member(p.raw, "connectionString"); ok {
		return nil, nil
	}
	var m map[string]string
	for _, n := range names {
		s, ok, err := p.str(eventgrid.EInvalidDestination, n)
		if err != nil {
			return nil, err
		}
		if ok {
			if m == nil {
				m = map[string]string{}
			}
			m[n] = s
		}
	}
	return m, nil
}

// has reports whether o has a member name, null included.
func (o object) has(name string) bool {
	_, ok := rawjson.Member(o.raw, name)
	return ok
}

// entityTarget returns what GET shows of an Event Hubs or Service Bus
// connection string.
func entityTarget(cs string) map[string]string {
	e, err := azconn.ParseEntity(cs)
	if err != nil {
		return nil
	}
	return map[string]string{"namespace": e.Host, "entityPath": e.EntityPath}
}

// storageTarget returns what GET shows of a storage connection string for
// one of its services (queue or blob).
func storageTarget(cs, service string) map[string]string {
	st, err := azconn.ParseStorage(cs)
	if err != nil {
		return nil
	}
	if service == "blob" {
		return map[string]string{"accountName": st.AccountName, "blobEndpoint": EndpointBaseURL(st.BlobEndpoint)}
	}
	return map[string]string{"accountName": st.AccountName, "queueEndpoint": EndpointBaseURL(st.QueueEndpoint)}
}

// mismatch returns the first (by name) of the stand-ins given that differs
// from the stored target's, or "".
func mismatch(given, stored map[string]string) string {
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if stored[k] != given[k] {
			return k
		}
	}
	return ""
}

// apply completes sub, decoded from a body, with the secrets of stored
// (nil when there is none) that the body left out, and refuses a body whose
// read-only stand-ins do not match what is stored.
func (k *kept) apply(sub, stored *eventgrid.EventSubscription) error {
	var old *eventgrid.Destination
	if stored != nil && stored.Queue == nil && sub.Queue == nil && stored.Destination.EndpointType == sub.Destination.EndpointType {
		old = &stored.Destination
	}
	d := &sub.Destination
	if err := k.keepURL(d, old); err != nil {
		return err
	}
	if err := k.keepConnection(d, old); err != nil {
		return err
	}
	// The other secrets go where the stored ones went, or nowhere.
	same := old != nil && d.EndpointURL == old.EndpointURL && d.ConnectionString == old.ConnectionString
	if k.sasKey && same {
		d.SASKey = old.SASKey
	}
	if k.signingSecret && same {
		d.SigningSecrets = old.SigningSecrets
	}
	for _, i := range k.attributes {
		a := &d.DeliveryAttributes[i]
		if v, ok := secretValue(old, a.Name); ok && same {
			a.Value = v
			continue
		}
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s.deliveryAttributeMappings[%d].properties.value is required for a Static mapping: there is no stored secret value of %q for this destination to keep.", k.dest, i, a.Name)
	}
	return k.keepDeadLetter(sub, stored)
}

func (k *kept) keepURL(d, old *eventgrid.Destination) error {
	if k.baseURL == "" {
		return nil
	}
	if old == nil || EndpointBaseURL(old.EndpointURL) != k.baseURL {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s.endpointUrl is required: endpointBaseUrl is read-only and names no stored URL of this destination to keep.", k.dest)
	}
	d.EndpointURL = old.EndpointURL
	return nil
}

func (k *kept) keepConnection(d, old *eventgrid.Destination) error {
	if k.target == nil {
		return nil
	}
	var stored map[string]string
	if old != nil {
		stored = destinationTarget(*old)
	}
	if err := matchTarget(k.dest, k.target, stored, "events"); err != nil {
		return err
	}
	d.ConnectionString = old.ConnectionString
	return nil
}

func (k *kept) keepDeadLetter(sub, stored *eventgrid.EventSubscription) error {
	if k.deadLetterTarget == nil {
		return nil
	}
	var have map[string]string
	if stored != nil && stored.DeadLetter != nil {
		have = storageTarget(stored.DeadLetter.ConnectionString, "blob")
	}
	if err := matchTarget(k.deadLetter, k.deadLetterTarget, have, "dead letters"); err != nil {
		return err
	}
	sub.DeadLetter.ConnectionString = stored.DeadLetter.ConnectionString
	return nil
}

// matchTarget refuses the stand-ins given at path for a connection string
// when nothing is stored (stored is nil) or when one differs from the
// stored target's; what names what the string sends there.
func matchTarget(path string, given, stored map[string]string, what string) error {
	if stored == nil {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s.connectionString is required: %s is read-only and names no stored connection string of this destination to keep.", path, slices.Sorted(maps.Keys(given))[0])
	}
	if m := mismatch(given, stored); m != "" {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s.%s is read-only and differs from the stored connection string's; give connectionString to change where %s go.", path, m, what)
	}
	return nil
}

// destinationTarget returns what GET shows in place of d's connection
// string, or nil when d has none.
func destinationTarget(d eventgrid.Destination) map[string]string {
	switch d.EndpointType {
	case eventgrid.EventHub, eventgrid.ServiceBusQueue, eventgrid.ServiceBusTopic:
		return entityTarget(d.ConnectionString)
	case eventgrid.StorageQueue:
		return storageTarget(d.ConnectionString, "queue")
	}
	return nil
}

// secretValue returns the value of d's Static secret mapping named name.
func secretValue(d *eventgrid.Destination, name string) (string, bool) {
	if d == nil {
		return "", false
	}
	for _, a := range d.DeliveryAttributes {
		if a.Type == "Static" && a.IsSecret && strings.EqualFold(a.Name, name) {
			return a.Value, true
		}
	}
	return "", false
}
