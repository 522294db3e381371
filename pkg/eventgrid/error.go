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
	ENotFound            = "NotFound"
	EMethodNotAllowed    = "MethodNotAllowed"
	EUnauthorized        = "Unauthorized"
	EQueueFull           = "QueueFull"
	EUnavailable         = "ServiceUnavailable"
	EInternal            = "InternalServerError"
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
