package webhook_test

import (
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/webhook"
)

// A Dynamic value that cannot be a header value is left out rather than
// failing the delivery.
func TestPropertiesDynamicValueNotAHeaderValue(t *testing.T) {
	attrs := []eventgrid.DeliveryAttribute{
		{Name: "x-ok", Type: "Dynamic", SourceField: "data.ok"},
		{Name: "x-ctl", Type: "Dynamic", SourceField: "data.ctl"},
		{Name: "x-del", Type: "Dynamic", SourceField: "data.del"},
	}
	body := []byte(`{"data":{"ok":"a\tb é","ctl":"a\u0001b","del":"\u007f"}}`)
	got := webhook.Properties(attrs, body)
	if len(got) != 1 || got[0] != (webhook.Property{Name: "x-ok", Value: "a\tb é"}) {
		t.Fatalf("Properties = %q, want only x-ok", got)
	}
}
