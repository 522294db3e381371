package registry_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// A webhook URL that can never be connected to is refused at PUT, with the
// field named.
func TestRegistry_EndpointURLHostAndPort(t *testing.T) {
	r, _ := MustNew(t, func(o *registry.Options) { o.WebhookHTTPSOnly = false })
	MustPutTopic(t, r, "t", eventgrid.EventGridSchema)
	const field = "properties.destination.properties.endpointUrl "
	tests := []struct{ url, msg string }{
		{"http://:80/x", field + "must name a host."},
		{"http://:/x", field + "must name a host."},
		{"http://[]:8080/x", field + "is not a valid URL: invalid host"},
		{"http://127.0.0.1:99999/x", field + "port 99999 is out of range; a port is 1 to 65535."},
		{"http://127.0.0.1:65536/x", field + "port 65536 is out of range"},
		{"http://h:0/x", field + "port 0 is out of range"},
		{"http://h:abc/x", field + `is not a valid URL: invalid port ":abc" after host.`},
		{"http://127.0.0.1:65535/x", ""},
		{"http://h:1/x", ""},
		{"http://[::1]:8080/x", ""},
		{"http://h:/x", ""}, // an empty port means the scheme's
		// A placeholder left in an example never resolves.
		{"https://<topic>.westus2-1.eventgrid.azure.net/api/events", field + `host "<topic>.westus2-1.eventgrid.azure.net" is not a host name`},
		{"http://$HOST:8080/x", field + `host "$HOST" is not a host name`},
		{"http://a_b.example:8080/x", ""},
		{"http://bücher.example/x", ""},
		{"http://[fe80::1%25eth0]:8080/x", ""},
	}
	for i, tt := range tests {
		sub := hook("t", fmt.Sprint("s", i))
		sub.Destination.EndpointURL = tt.url
		_, _, err := r.PutSubscription(t.Context(), sub)
		if tt.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.url, err)
			}
			continue
		}
		if eventgrid.ErrorCode(err) != eventgrid.EInvalidDestination || !strings.Contains(eventgrid.ErrorMessage(err), tt.msg) {
			t.Errorf("%s: error %v, want InvalidDestination with %q", tt.url, err, tt.msg)
		}
	}
}

// includedEventTypes is bounded by the configured limit.
func TestRegistry_IncludedEventTypesLimit(t *testing.T) {
	r, _ := MustNew(t, func(o *registry.Options) { o.Filter = filter.Limits{MaxIncludedEventTypes: 3} })
	MustPutTopic(t, r, "t", eventgrid.EventGridSchema)
	sub := hook("t", "s")
	sub.Filter = &eventgrid.Filter{IncludedEventTypes: []string{"a", "b", "c"}}
	if _, _, err := r.PutSubscription(t.Context(), sub); err != nil {
		t.Fatal(err)
	}
	sub.Filter.IncludedEventTypes = append(sub.Filter.IncludedEventTypes, "d")
	_, _, err := r.PutSubscription(t.Context(), sub)
	mustCode(t, err, eventgrid.EInvalidFilter)
	if msg := eventgrid.ErrorMessage(err); !strings.Contains(msg, "filter.includedEventTypes: 4 event types exceed the limit of 3") {
		t.Errorf("message %q", msg)
	}
}
