package resource

import (
	"time"

	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// NewDeliveryStatus builds the deliveryStatus of a subscription from what
// its delivery mode holds (st) and its totals (tot): a queue
// subscription's counts when queue is set, the push counts otherwise.
func NewDeliveryStatus(queue bool, st inspect.Status, tot inspect.Totals) *DeliveryStatus {
	totals := DeliveryTotals{
		Delivered: tot.Delivered, FailedAttempts: tot.FailedAttempts, DeadLettered: tot.DeadLettered, Dropped: tot.Dropped,
		LastSuccessTime: inspect.FormatTime(tot.LastSuccess),
	}
	if queue {
		return &DeliveryStatus{Queue: &QueueStatus{
			State: queueStateOf(st), Available: st.Ready, Locked: st.InFlight, Delayed: st.Waiting,
			ReceiversWaiting: st.ReceiversWaiting,
			DeliveryTotals:   totals,
			NextAttemptTime:  inspect.FormatTime(st.NextAttempt),
			OldestQueuedTime: inspect.FormatTime(st.Oldest),
			LastReceiveTime:  inspect.FormatTime(st.LastReceive),
			PausedSince:      inspect.FormatTime(st.PausedSince),
		}}
	}
	ds := &DeliveryStatus{
		State: stateOf(st), Ready: st.Ready, InBackoff: st.Waiting, InFlight: st.InFlight,
		ConcurrencyLimit: st.ConcurrencyLimit,
		DeliveryTotals:   totals,
		LastFailureTime:  inspect.FormatTime(st.LastFailure),
		LastError:        st.LastError,
		NextAttemptTime:  inspect.FormatTime(st.NextAttempt),
		OldestQueuedTime: inspect.FormatTime(st.Oldest),
		ProbationUntil:   inspect.FormatTime(st.ProbationUntil),
		PausedSince:      inspect.FormatTime(st.PausedSince),
	}
	if !st.LastFailure.IsZero() {
		ds.LastFailureStatusCode = tot.LastFailureStatus
	}
	return ds
}

// stateOf is the first state that holds of a push subscription's st.
func stateOf(st inspect.Status) string {
	switch {
	case !st.PausedSince.IsZero():
		return StatePaused
	case !st.ProbationUntil.IsZero():
		return StateOnProbation
	case st.Failures > 0:
		return StateFailing
	case st.Waiting > 0:
		return StateRetrying
	case st.Ready+st.InFlight > 0:
		return StateDelivering
	}
	return StateIdle
}

// NoReceiverAfter is how long a queue subscription with events available,
// none locked and no receive waiting may go without a receive before its
// state is NoReceiver: a receiver that receives in a loop comes back
// sooner.
const NoReceiverAfter = 30 * time.Second

// queueStateOf is the first state that holds of a queue subscription's st,
// which is never on probation nor failing: its receivers say nothing of
// their health.
func queueStateOf(st inspect.Status) string {
	switch {
	case !st.PausedSince.IsZero():
		return StatePaused
	case st.Ready > 0 && st.InFlight == 0 && st.ReceiversWaiting == 0 &&
		(st.LastReceive.IsZero() || st.Taken.Sub(st.LastReceive) >= NoReceiverAfter):
		return StateNoReceiver
	case st.Waiting > 0:
		return StateRetrying
	case st.Ready+st.InFlight > 0:
		return StateDelivering
	}
	return StateIdle
}
