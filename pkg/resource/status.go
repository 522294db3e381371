package resource

import (
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
			State: stateOf(st), Available: st.Ready, Locked: st.InFlight, Delayed: st.Waiting,
			DeliveryTotals:   totals,
			NextAttemptTime:  inspect.FormatTime(st.NextAttempt),
			OldestQueuedTime: inspect.FormatTime(st.Oldest),
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
	}
	if !st.LastFailure.IsZero() {
		ds.LastFailureStatusCode = tot.LastFailureStatus
	}
	return ds
}

// stateOf is the first state that holds of st, whatever the mode: a queue
// subscription is never on probation nor failing.
func stateOf(st inspect.Status) string {
	switch {
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
