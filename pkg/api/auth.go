package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Authenticator checks a request's credentials (package auth implements it).
type Authenticator interface {
	// Authenticate returns nil when the request may proceed. The reason is
	// for debug logs only: it is never sent to the client.
	Authenticate(r *http.Request) (reason string, err error)
}

// authenticate refuses requests that fail the authenticator with 401 and
// the same message whatever failed, so a client learns nothing about which
// credential was wrong.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.opts.Authenticator == nil {
			return next(c)
		}
		if reason, err := s.opts.Authenticator.Authenticate(c.Request()); err != nil {
			s.log.Debug().Str("reason", reason).Str("remote", c.RealIP()).Str("path", c.Request().URL.Path).Msg("request refused: not authenticated")
			return eventgrid.Errorf(eventgrid.EUnauthorized, "The request is not authorized: present a trusted client certificate, a valid aeg-sas-key, or a SAS token in aeg-sas-token or Authorization: SharedAccessSignature.")
		}
		return next(c)
	}
}
