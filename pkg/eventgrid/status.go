package eventgrid

import "net/http"

// statusByCode maps every detailed error code to the HTTP status the API
// answers it with. It is the only place that decides a failure's status:
// the API's answers and the errors reported for declared entries (the
// module twin's HttpStatusCode='…') both read it, so that one mistake gets
// one answer whichever way it was made.
var statusByCode = map[string]int{
	EInvalidAPIVersion:   http.StatusBadRequest,
	EUnsupportedMedia:    http.StatusUnsupportedMediaType,
	EBadRequest:          http.StatusBadRequest,
	EInvalidJSON:         http.StatusBadRequest,
	EUnknownMember:       http.StatusBadRequest,
	ENotSupported:        http.StatusBadRequest,
	EInvalidName:         http.StatusBadRequest,
	ETopicNameMismatch:   http.StatusBadRequest,
	EInvalidSchema:       http.StatusBadRequest,
	EInvalidDestination:  http.StatusBadRequest,
	EInvalidRetryPolicy:  http.StatusBadRequest,
	EInvalidDelivery:     http.StatusBadRequest,
	EInvalidPersistence:  http.StatusBadRequest,
	EInvalidFilter:       http.StatusBadRequest,
	EInvalidEvent:        http.StatusBadRequest,
	ELimitExceeded:       http.StatusBadRequest,
	EPayloadTooLarge:     http.StatusRequestEntityTooLarge,
	ETopicNotFound:       http.StatusNotFound,
	ESubscriptionMissing: http.StatusNotFound,
	EConflict:            http.StatusConflict,
	ENotFound:            http.StatusNotFound,
	EMethodNotAllowed:    http.StatusMethodNotAllowed,
	EUnknownAction:       http.StatusBadRequest,
	EUnauthorized:        http.StatusUnauthorized,
	EForbidden:           http.StatusForbidden,
	EQueueFull:           http.StatusServiceUnavailable,
	EEventsHeld:          http.StatusConflict,
	EUnavailable:         http.StatusServiceUnavailable,
	ETooManyStreams:      http.StatusServiceUnavailable,
	ETooManyConnections:  http.StatusServiceUnavailable,
	EInternal:            http.StatusInternalServerError,
}

// statusNames are the envelope's error.code values: HTTP status names as
// .NET spells them, which is what the original module returned.
var statusNames = map[int]string{
	http.StatusBadRequest:            "BadRequest",
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusForbidden:             "Forbidden",
	http.StatusNotFound:              "NotFound",
	http.StatusMethodNotAllowed:      "MethodNotAllowed",
	http.StatusConflict:              "Conflict",
	http.StatusRequestEntityTooLarge: "RequestEntityTooLarge",
	http.StatusUnsupportedMediaType:  "UnsupportedMediaType",
	http.StatusInternalServerError:   "InternalServerError",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
	http.StatusRequestTimeout:        "RequestTimeout",
}

// Status returns the HTTP status an error of code is answered with: 400
// for a code the table does not list.
func Status(code string) int {
	if status, ok := statusByCode[code]; ok {
		return status
	}
	return http.StatusBadRequest
}

// StatusName returns the name .NET gives status ("BadRequest",
// "Conflict"), the error envelope's error.code.
func StatusName(status int) string { return statusNames[status] }
