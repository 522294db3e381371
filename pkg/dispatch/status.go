package dispatch

import (
	"time"

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
// available (queue) at once, and returns how many it moved and how many of
// those were at their last attempt; the attempt it forces costs an event
// nothing (docs/delivery.md#retry-now). ok is false when its mode has no
// queue for it.
func (d *Dispatcher) RetryNow(sub *eventgrid.EventSubscription) (moved, atLast int, ok bool) {
	return d.modeOf(sub).RetryNow(sub)
}

// Pause pauses (paused true) or resumes sub's delivery, whatever its mode,
// and returns since when it is paused, zero once resumed
// (docs/delivery.md#pause-and-resume); ok is false when its mode has no
// queue for it. The pause lives in memory: it is gone after a restart.
func (d *Dispatcher) Pause(sub *eventgrid.EventSubscription, paused bool) (since time.Time, ok bool) {
	return d.modeOf(sub).Pause(sub, paused)
}

// Purge removes the events sub holds that are not in flight or locked, and
// returns how many (docs/delivery.md#purge); ok is false when its mode has
// no queue for it.
func (d *Dispatcher) Purge(sub *eventgrid.EventSubscription) (purged int, ok bool) {
	return d.modeOf(sub).Purge(sub)
}
