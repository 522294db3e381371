package eventgrid_test

import (
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

func TestEndpointTypeName(t *testing.T) {
	push := &eventgrid.EventSubscription{Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook}}
	queue := &eventgrid.EventSubscription{Queue: &eventgrid.QueueConfig{}}
	if got := push.EndpointTypeName(); got != "WebHook" {
		t.Errorf("push subscription: %q", got)
	}
	if got := queue.EndpointTypeName(); got != "Queue" {
		t.Errorf("queue subscription: %q; want Queue", got)
	}
}
