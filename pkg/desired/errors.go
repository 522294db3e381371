package desired

import (
	"fmt"
	"regexp"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// FormatError formats err as the module twin reports a failed entry:
// HttpStatusCode='NotFound' ErrorCode='TopicNotFound' Message='…', with
// the status the API answers the same error with (eventgrid.Status). Errors
// that carry no eventgrid code are reported as internal errors without
// their detail.
func FormatError(err error) string {
	code := eventgrid.ErrorCode(err)
	status := eventgrid.StatusName(eventgrid.Status(code))
	return fmt.Sprintf("HttpStatusCode='%s' ErrorCode='%s' Message='%s'", status, code, eventgrid.ErrorMessage(err))
}

// apiPrefix is "properties." where it begins a member path: the REST API's
// body wraps a resource's members in "properties", which a declaration
// entry does not have.
var apiPrefix = regexp.MustCompile(`(^|[^.\w])properties\.`)

// inDeclarationTerms rewrites an error about an entry in the declaration's
// own terms: the member paths the API's validation names (say
// "properties.destination.properties.endpointUrl") lose their leading
// "properties." ("destination.properties.endpointUrl"). The code stays.
func inDeclarationTerms(err error) error {
	msg := eventgrid.ErrorMessage(err)
	if out := apiPrefix.ReplaceAllString(msg, "${1}"); out != msg && eventgrid.ErrorCode(err) != eventgrid.EInternal {
		return &termsError{reworded: eventgrid.Errorf(eventgrid.ErrorCode(err), "%s", out), cause: err}
	}
	return err
}

// termsError is an error reworded by inDeclarationTerms. It unwraps to the
// reworded *eventgrid.Error first, then to the original, so a passing
// failure stays one.
type termsError struct {
	reworded *eventgrid.Error
	cause    error
}

func (e *termsError) Error() string   { return e.reworded.Error() }
func (e *termsError) Unwrap() []error { return []error{e.reworded, e.cause} }
