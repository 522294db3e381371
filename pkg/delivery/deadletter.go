package delivery

// The deadLetterReason values of cloud Event Grid. A never-retried status
// gives "UndeliverableDueToHttp" + the outcome's name. The record itself is
// eventgrid.DeadLetter, which queue subscriptions fill in too.
const (
	ReasonMaxDeliveryAttempts = "MaxDeliveryAttemptsExceeded"
	ReasonTimeToLive          = "TimeToLiveExceeded"
	reasonHTTPPrefix          = "UndeliverableDueToHttp"
)
