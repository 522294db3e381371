package push

import (
	"context"
	"fmt"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Senders is a Sender that hands each batch to the Sender registered for
// its destination's endpoint type. (Matching events to subscriptions is
// the registry's Router; this only picks the way out.)
type Senders map[eventgrid.EndpointType]Sender

var _ Sender = Senders(nil)

// Send implements Sender.
func (m Senders) Send(ctx context.Context, b *Batch) error {
	s, ok := m[b.Subscription.Destination.EndpointType]
	if !ok {
		return fmt.Errorf("delivery: no sender for endpoint type %s", b.Subscription.Destination.EndpointType)
	}
	return s.Send(ctx, b)
}
