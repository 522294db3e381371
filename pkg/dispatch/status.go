package dispatch

import (
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// Status returns what sub's mode holds of it now, in the terms both modes
// share, for the API's deliveryStatus (docs/console.md#delivery-status);
// ok is false when its mode has no queue for it.
func (d *Dispatcher) Status(sub *eventgrid.EventSubscription) (inspect.Status, bool) {
	return d.modeOf(sub).Status(sub)
}

// Peek returns a bounded copy of the top oldest events sub holds, whatever
// its mode, and how many it holds; ok is false when its mode has no queue
// for it. Nothing is delivered, received, locked or reordered.
func (d *Dispatcher) Peek(sub *eventgrid.EventSubscription, top int) (inspect.Peek, bool) {
	return d.modeOf(sub).Peek(sub, top)
}

// RetryNow makes sub's events that wait to be tried again ready (push) or
// available (queue) at once, and returns how many it moved; ok is false
// when its mode has no queue for it.
func (d *Dispatcher) RetryNow(sub *eventgrid.EventSubscription) (moved int, ok bool) {
	return d.modeOf(sub).RetryNow(sub)
}
