package registry

import (
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Every endpoint type the decoder accepts has a rule: a type added to
// eventgrid.KnownEndpointTypes without one fails here rather than at the
// first PUT.
func TestDestinationRules_EveryKnownType(t *testing.T) {
	for _, typ := range eventgrid.KnownEndpointTypes {
		if destinationRules[typ] == nil {
			t.Errorf("endpoint type %s has no rule in destinationRules", typ)
		}
	}
	if len(destinationRules) != len(eventgrid.KnownEndpointTypes) {
		t.Errorf("destinationRules has %d types, eventgrid.KnownEndpointTypes %d", len(destinationRules), len(eventgrid.KnownEndpointTypes))
	}
}
