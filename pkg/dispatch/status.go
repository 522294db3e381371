package dispatch

import (
	"github.com/edgegrid/edgegrid/pkg/delivery"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/pull"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

// DeliveryStatus returns the deliveryStatus of sub's responses
// (docs/console.md#delivery-status): a push subscription's queue, its last
// failure and its totals, or a queue subscription's counts and totals; nil
// when its mode has no queue for it.
func (d *Dispatcher) DeliveryStatus(sub *eventgrid.EventSubscription) *resource.DeliveryStatus {
	if sub.IsQueue() {
		return d.queueStatus(sub)
	}
	if d.opts.Push == nil {
		return nil
	}
	st, ok := d.opts.Push.QueueStats(sub)
	if !ok {
		return nil
	}
	tot := d.opts.Board.Subscription(sub.UID).Totals()
	ds := &resource.DeliveryStatus{
		State:            pushState(st),
		Ready:            st.Ready,
		InBackoff:        st.Backoff[0] + st.Backoff[1] + st.Scheduled,
		InFlight:         st.InFlight,
		ConcurrencyLimit: st.ConcurrencyLimit,
		DeliveryTotals:   totals(tot),
		LastFailureTime:  inspect.FormatTime(st.LastFailure),
		LastError:        st.LastError,
		NextAttemptTime:  inspect.FormatTime(st.NextAttempt),
		OldestQueuedTime: inspect.FormatTime(st.Oldest),
		ProbationUntil:   inspect.FormatTime(st.ProbationUntil),
	}
	if !st.LastFailure.IsZero() {
		ds.LastFailureStatusCode = tot.LastFailureStatus
	}
	return ds
}

// pushState is the first state that holds of a push subscription's queue.
func pushState(st delivery.QueueStats) string {
	switch {
	case !st.ProbationUntil.IsZero():
		return resource.StateOnProbation
	case st.Failures > 0:
		return resource.StateFailing
	case st.Backoff[0]+st.Backoff[1]+st.Scheduled > 0:
		return resource.StateRetrying
	case st.Ready+st.InFlight > 0:
		return resource.StateDelivering
	}
	return resource.StateIdle
}

func (d *Dispatcher) queueStatus(sub *eventgrid.EventSubscription) *resource.DeliveryStatus {
	if d.opts.Queues == nil {
		return nil
	}
	st, ok := d.opts.Queues.Status(sub)
	if !ok {
		return nil
	}
	return &resource.DeliveryStatus{Queue: &resource.QueueStatus{
		State:            queueState(st),
		Available:        st.Available,
		Locked:           st.Locked,
		Delayed:          st.Delayed,
		DeliveryTotals:   totals(d.opts.Board.Subscription(sub.UID).Totals()),
		NextAttemptTime:  inspect.FormatTime(st.NextDelayed),
		OldestQueuedTime: inspect.FormatTime(st.Oldest),
	}}
}

// queueState is the first state that holds of a queue subscription.
func queueState(st pull.Status) string {
	switch {
	case st.Delayed > 0:
		return resource.StateRetrying
	case st.Available+st.Locked > 0:
		return resource.StateDelivering
	}
	return resource.StateIdle
}

func totals(t inspect.Totals) resource.DeliveryTotals {
	return resource.DeliveryTotals{
		Delivered: t.Delivered, FailedAttempts: t.FailedAttempts, DeadLettered: t.DeadLettered, Dropped: t.Dropped,
		LastSuccessTime: inspect.FormatTime(t.LastSuccess),
	}
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
