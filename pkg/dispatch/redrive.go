package dispatch

import (
	"context"
	"time"

	"github.com/edgegrid/edgegrid/pkg/budget"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Redrive queues bodies again for sub, and for sub alone, whatever its
// mode, as if the broker had just accepted them (docs/delivery.md#redrive):
// no attempt made yet, their time to live counted from now. They are one
// request in the broker's budget, which decides as it does for a publish:
// EPayloadTooLarge when they could never fit, EQueueFull when they do not
// fit now (after holding them for room, as a publish is held, until ctx is
// done); either way nothing is queued. The bodies are kept; they must not
// be modified. It returns ESubscriptionMissing when sub's mode has no queue
// for it and EUnavailable once the broker stops.
func (d *Dispatcher) Redrive(ctx context.Context, sub *eventgrid.EventSubscription, bodies [][]byte) error {
	if len(bodies) == 0 {
		return nil
	}
	mode := d.modeOf(sub)
	share, err := mode.Share(sub)
	if err != nil {
		return err
	}
	if share == nil {
		return eventgrid.Errorf(eventgrid.ESubscriptionMissing, "Event subscription %q does not exist in topic %q.", sub.Name, sub.Topic)
	}
	var bytes int64
	for _, b := range bodies {
		bytes += int64(len(b))
	}
	claims := []budget.Claim{{Sub: sub, Share: share, Events: int64(len(bodies)), Bytes: bytes}}
	h, err := d.opts.Budget.ReserveWithin(ctx, d.wait(), int64(len(bodies)), bytes, d.now(), claims)
	if err != nil {
		return err
	}
	mode.Enqueue(claims[0], bodies, h)
	return nil
}

// now reads the modes' clock.
func (d *Dispatcher) now() time.Time {
	if d.opts.Clock == nil {
		return time.Now()
	}
	return d.opts.Clock.Now()
}
