package eventgrid

import (
	"errors"
	"fmt"
)

// Detailed error codes, reported as error.details.code in the API's error
// envelope. The API maps each one to an HTTP status in a single place.
const (
	EInvalidAPIVersion   = "InvalidApiVersion"
	EUnsupportedMedia    = "UnsupportedMediaType"
	EBadRequest          = "BadRequest"
	EInvalidJSON         = "InvalidJson"
	EUnknownMember       = "UnknownMember"
	ENotSupported        = "NotSupported"
	EInvalidName         = "InvalidName"
	ETopicNameMismatch   = "TopicNameMismatch"
	EInvalidSchema       = "InvalidSchema"
	EInvalidDestination  = "InvalidDestination"
	EInvalidRetryPolicy  = "InvalidRetryPolicy"
	EInvalidDelivery     = "InvalidDeliveryPolicy"
	EInvalidPersistence  = "InvalidPersistencePolicy"
	EInvalidFilter       = "InvalidFilter"
	EInvalidEvent        = "InvalidEvent"
	ELimitExceeded       = "LimitExceeded"
	EPayloadTooLarge     = "PayloadTooLarge"
	ETopicNotFound       = "TopicNotFound"
	ESubscriptionMissing = "SubscriptionNotFound"
	// EConflict: the resource is managed elsewhere (see Owner).
	EConflict         = "Conflict"
	ENotFound         = "NotFound"
	EMethodNotAllowed = "MethodNotAllowed"
	// EUnknownAction refuses a POST of …:{action} naming no action of the
	// resource.
	EUnknownAction = "UnknownAction"
	EUnauthorized  = "Unauthorized"
	// EForbidden: the credential is good, but does not hold the permission
	// the route needs (a SAS token on a route that reads or manages).
	EForbidden = "Forbidden"
	EQueueFull = "QueueFull"
	// EEventsHeld refuses a change that would discard the events a
	// subscription holds, such as switching it between push and queue.
	EEventsHeld  = "SubscriptionHoldsEvents"
	EUnavailable = "ServiceUnavailable"
	// ETooManyStreams refuses an event stream (a live tail, the delivery
	// outcomes) beyond the broker's limit of open ones.
	ETooManyStreams = "TooManyStreams"
	// ETooManyConnections refuses a connection beyond the API's limit of
	// open ones, none of them idle.
	ETooManyConnections = "TooManyConnections"
	EInternal           = "InternalServerError"
)

// Error is an error a client can act on. Code is one of the E* constants;
// Message is safe to show to the caller.
type Error struct {
	Code    string
	Message string
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("eventgrid error: code=%s message=%s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or EInternal
// when there is none: internal details are logged, never shown to clients.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the message of the first *Error in err's chain, or a
// generic text when there is none.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "The service encountered an internal error."
}

// Passing marks err as a failure of the moment rather than of the request:
// an endpoint that did not answer a validation handshake as asked, say.
// The same request may succeed later unchanged. The code and message stay
// err's.
func Passing(err error) error {
	if err == nil {
		return nil
	}
	return &passingError{err}
}

type passingError struct{ err error }

func (e *passingError) Error() string { return e.err.Error() }
func (e *passingError) Unwrap() error { return e.err }

// IsPassing reports whether err was marked by Passing.
func IsPassing(err error) bool {
	var p *passingError
	return errors.As(err, &p)
}
