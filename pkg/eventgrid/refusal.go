package eventgrid

import "errors"

// Why a publish request was refused for room, as
// eventgrid_publish_rejected_total names it (docs/metrics.md).
const (
	// RefusedBrokerFull: the broker's own bounds (broker__maxQueuedEvents,
	// broker__maxQueuedBytes) are full now; 503, retry later.
	RefusedBrokerFull = "broker_full"
	// RefusedSubscriptionFull: a subscription's share is full now; 503.
	RefusedSubscriptionFull = "subscription_full"
	// RefusedTooLarge: the request is larger than a bound it would have
	// to fit, however empty the broker; 413, retrying cannot help.
	RefusedTooLarge = "too_large"
	// RefusedBodiesInFlight: the API reads its limit of request bodies
	// (api__maxBodyBytesInFlight); 503.
	RefusedBodiesInFlight = "bodies_in_flight"
)

// RefusalReasons lists every reason a publish request is refused for
// room.
var RefusalReasons = []string{RefusedBrokerFull, RefusedSubscriptionFull, RefusedTooLarge, RefusedBodiesInFlight}

// Refusal is a publish request refused for room: why (Refused*), and the
// error it is answered with (EQueueFull, EUnavailable or
// EPayloadTooLarge), which ErrorCode and ErrorMessage find through it.
type Refusal struct {
	Reason string
	Err    error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Refuse returns the Refusal for reason, answered with the error of code,
// format and args.
func Refuse(reason, code, format string, args ...any) error {
	return &Refusal{Reason: reason, Err: Errorf(code, format, args...)}
}

// RefusalReason returns why err refused a publish request for room, ""
// when it is not such a refusal.
func RefusalReason(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}
