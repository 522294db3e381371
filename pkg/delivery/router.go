package delivery

import (
	"context"
	"fmt"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Router is a Sender that hands each batch to the Sender registered for its
// destination's endpoint type.
type Router map[eventgrid.EndpointType]Sender

var _ Sender = Router(nil)

// Send implements Sender.
func (r Router) Send(ctx context.Context, b *Batch) error {
	s, ok := r[b.Subscription.Destination.EndpointType]
	if !ok {
		return fmt.Errorf("delivery: no sender for endpoint type %s", b.Subscription.Destination.EndpointType)
	}
	return s.Send(ctx, b)
}
