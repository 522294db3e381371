package registry_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/filter"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

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
