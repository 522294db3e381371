package resource_test

import (
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// TestPaused: a declaration may state paused (true, false, or the twin's
// strings); a body over the REST API may not, and is told how to pause.
func TestPaused(t *testing.T) {
	const dest = `"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://h/x"}}`
	for _, tt := range []struct {
		paused string
		want   bool
	}{{`true`, true}, {`false`, false}, {`"True"`, true}, {`null`, false}} {
		sub, err := resource.DecodeSubscriptionProperties([]byte(`{"topic": "t", "paused": `+tt.paused+`, `+dest+`}`), "", "", "s")
		if err != nil || sub.Paused != tt.want {
			t.Errorf("declared paused %s: %v, %v", tt.paused, sub.Paused, err)
		}
	}
	if _, err := resource.DecodeSubscriptionProperties([]byte(`{"topic": "t", "paused": 1, `+dest+`}`), "", "", "s"); eventgrid.ErrorCode(err) != eventgrid.EBadRequest ||
		!strings.Contains(eventgrid.ErrorMessage(err), "paused must be true or false") {
		t.Errorf("declared paused 1: %v", err)
	}
	_, err := resource.DecodeSubscription([]byte(`{"properties": {"paused": true, `+dest+`}}`), "t", "s")
	if eventgrid.ErrorCode(err) != eventgrid.ENotSupported || !strings.Contains(eventgrid.ErrorMessage(err), ":pause") {
		t.Errorf("paused over the REST API: %v", err)
	}
}
