package resource

import (
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// decodeWebhookInterop reads the webhook interop properties of a
// destination (docs/design.md#webhook-interop): contentMode, validation and
// signingSecret. The names of
// the modes are matched case-insensitively and stored in their canonical
// spelling; an unknown name is refused with the accepted ones. The signing
// secrets are split on white space and checked by the registry; no error
// text ever contains them.
func decodeWebhookInterop(p object, d *eventgrid.Destination) error {
	s, ok, err := p.str(eventgrid.EInvalidDestination, "contentMode")
	if err != nil {
		return err
	}
	if ok {
		m, valid := parseName(s, eventgrid.ContentBatch, eventgrid.ContentStructured, eventgrid.ContentBinary)
		if !valid {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %q is not valid; accepted values are Batch, Structured and Binary.", p.field("contentMode"), s)
		}
		d.ContentMode = m
	}
	if s, ok, err = p.str(eventgrid.EInvalidDestination, "validation"); err != nil {
		return err
	}
	if ok {
		v, valid := parseName(s, eventgrid.ValidationNone, eventgrid.ValidationEventGrid, eventgrid.ValidationCloudEvents)
		if !valid {
			return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s %q is not valid; accepted values are None, EventGrid and CloudEvents.", p.field("validation"), s)
		}
		d.Validation = v
	}
	secrets, ok, err := p.str(eventgrid.EInvalidDestination, "signingSecret")
	if err != nil || !ok {
		return err
	}
	d.SigningSecrets = strings.Fields(secrets)
	if len(d.SigningSecrets) == 0 {
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "%s must not be empty.", p.field("signingSecret"))
	}
	return nil
}

// parseName returns the name among names that equals s ignoring case and
// surrounding white space.
func parseName[T ~string](s string, names ...T) (T, bool) {
	s = strings.TrimSpace(s)
	for _, n := range names {
		if strings.EqualFold(s, string(n)) {
			return n, true
		}
	}
	return "", false
}
