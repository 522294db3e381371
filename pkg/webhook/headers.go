package webhook

import (
	"net/http"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// setProperties adds the custom delivery properties of a delivery as
// headers, Dynamic values taken from its first event (eventgrid.Properties
// gives every destination the same values).
func setProperties(h http.Header, attrs []eventgrid.DeliveryAttribute, bodies [][]byte) {
	if len(attrs) == 0 || len(bodies) == 0 {
		return
	}
	for _, p := range eventgrid.Properties(attrs, bodies[0]) {
		h.Set(p.Name, p.Value)
	}
}
