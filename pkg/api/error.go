package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// envelope is the error body of every API (docs/design.md#errors).
type envelope struct {
	Error envelopeError `json:"error"`
}

type envelopeError struct {
	Code    string          `json:"code"`
	Details envelopeDetails `json:"details"`
}

type envelopeDetails struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// envelopeJSON encodes an error body as it is read, without the HTML
// escapes encoding/json adds by default: a message that quotes an
// example's placeholder shows "<account>", not "\u003caccount\u003e".
func envelopeJSON(e envelope) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e) // strings and structs only: it cannot fail
	return b.Bytes()
}

// retryAfterError is returned by the publish path when the broker's queues
// are full; the error handler adds the Retry-After header, and
// Connection: close when closeConn is set: a refusal for a limit of what
// waits or streams, whose client should not keep its connection open
// meanwhile (docs/api.md#connections).
type retryAfterError struct {
	err       error
	seconds   int
	closeConn bool
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// fromEcho converts echo's own errors (unknown route, wrong method, body too
// large) into domain errors.
func fromEcho(he *echo.HTTPError) error {
	switch he.Code {
	case http.StatusNotFound:
		return eventgrid.Errorf(eventgrid.ENotFound, "No API matches this path.")
	case http.StatusMethodNotAllowed:
		return eventgrid.Errorf(eventgrid.EMethodNotAllowed, "The method is not allowed on this path.")
	case http.StatusRequestEntityTooLarge:
		return eventgrid.Errorf(eventgrid.EPayloadTooLarge, "The request body is too large.")
	case http.StatusUnauthorized:
		return eventgrid.Errorf(eventgrid.EUnauthorized, "The request is not authorized.")
	}
	return he
}

// statusOf returns the HTTP status an error is answered with.
func statusOf(err error) int {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		err = fromEcho(he)
	}
	return eventgrid.Status(eventgrid.ErrorCode(err))
}

// handleError is echo's HTTPErrorHandler: it writes every failure as the
// error envelope. Internal errors are logged and reported without detail.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		err = fromEcho(he)
	}
	code := eventgrid.ErrorCode(err)
	status := statusOf(err)
	if code == eventgrid.EInternal {
		s.log.Error().Err(err).Str("method", c.Request().Method).Str("path", c.Request().URL.Path).Msg("request failed")
	} else if s.log.GetLevel() <= zerolog.DebugLevel {
		s.log.Debug().Str("code", code).Str("method", c.Request().Method).Str("path", c.Request().URL.Path).Msg(eventgrid.ErrorMessage(err))
	}
	s.drainRefused(c)
	var ra *retryAfterError
	if errors.As(err, &ra) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(ra.seconds))
		if ra.closeConn {
			c.Response().Header().Set(echo.HeaderConnection, "close")
		}
	}
	body := envelope{Error: envelopeError{
		Code:    eventgrid.StatusName(status),
		Details: envelopeDetails{Code: code, Message: eventgrid.ErrorMessage(err)},
	}}
	if c.Request().Method == http.MethodHead {
		err = c.NoContent(status)
	} else {
		err = c.JSONBlob(status, envelopeJSON(body))
	}
	if err != nil {
		s.log.Debug().Err(err).Msg("writing error response")
	}
}
