package desired

import (
	"fmt"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// statusNames are the HTTP status names, as .NET spells them, of the error
// codes the API does not answer with 400 Bad Request. They mirror the API's
// mapping of codes to statuses.
var statusNames = map[string]string{
	eventgrid.ETopicNotFound:       "NotFound",
	eventgrid.ESubscriptionMissing: "NotFound",
	eventgrid.ENotFound:            "NotFound",
	eventgrid.EConflict:            "Conflict",
	eventgrid.EPayloadTooLarge:     "RequestEntityTooLarge",
	eventgrid.EUnsupportedMedia:    "UnsupportedMediaType",
	eventgrid.EMethodNotAllowed:    "MethodNotAllowed",
	eventgrid.EUnauthorized:        "Unauthorized",
	eventgrid.EQueueFull:           "ServiceUnavailable",
	eventgrid.EUnavailable:         "ServiceUnavailable",
	eventgrid.EInternal:            "InternalServerError",
}

// FormatError formats err as the module twin reports a failed entry:
// HttpStatusCode='NotFound' ErrorCode='TopicNotFound' Message='…'. Errors
// that carry no eventgrid code are reported as internal errors without
// their detail.
func FormatError(err error) string {
	code := eventgrid.ErrorCode(err)
	status, ok := statusNames[code]
	if !ok {
		status = "BadRequest"
	}
	return fmt.Sprintf("HttpStatusCode='%s' ErrorCode='%s' Message='%s'", status, code, eventgrid.ErrorMessage(err))
}
