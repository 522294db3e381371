package api

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Authenticator checks a request's credentials (package auth implements it).
type Authenticator interface {
	// Check returns what the request's credential holds; whether that is
	// enough for a route is the Grant's Permit. The reason is for the log
	// only: it is never sent to the client, and never holds a credential.
	// An error with an AuthFailureReason() string method names the kind of
	// failure for the auth failure metric; an *auth.Failure also says what
	// the client should know.
	Check(r *http.Request) (g auth.Grant, reason string, err error)
}

// UnknownAuthFailure is the metric reason of a refusal whose error does not
// say its kind.
const UnknownAuthFailure = "unknown"

// DefaultAuthFailureLogInterval is the least time between two log lines
// about refused requests.
const DefaultAuthFailureLogInterval = 10 * time.Second

// authorize refuses the requests of route r whose credential does not hold
// its permission (docs/security.md#who-may-do-what): 401 when no credential
// presented is good for the request, naming the kinds this broker takes
// and, where it can tell, which was missing or refused; 403 when a SAS
// token reaches the route's resource but a token never holds the
// permission. It runs before anything else of the route, so that an
// unauthenticated client learns nothing, not even whether its api-version
// is right. Every refusal is counted; the log gets at most one line per
// interval, with the number of refusals it did not show.
func (s *Server) authorize(r *rule) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if s.svc.Authenticator == nil {
				return next(c)
			}
			g, reason, err := s.svc.Authenticator.Check(c.Request())
			if err == nil {
				if g.HoldsAll() {
					return next(c)
				}
				if reason, err = g.Permit(r.Permission, r.resourceOf(c)); err == nil {
					return next(c)
				}
			}
			return s.refuse(c, reason, err)
		}
	}
}

// refuse counts and logs a refused request, and returns its answer.
func (s *Server) refuse(c echo.Context, reason string, err error) error {
	kind := UnknownAuthFailure
	var k interface{ AuthFailureReason() string }
	if errors.As(err, &k) {
		kind = k.AuthFailureReason()
	}
	s.svc.Metrics.AuthFailed(kind)
	var denied *auth.Denied
	forbidden := errors.As(err, &denied)
	if suppressed, ok := s.authLog.allow(time.Now()); ok {
		msg := "request refused: not authenticated"
		if forbidden {
			msg = "request refused: not permitted"
		}
		s.log.Warn().Str("reason", kind).Str("detail", reason).Str("remote", remoteHost(c.Request())).
			Str("method", c.Request().Method).Str("path", c.Request().URL.Path).
			Int("suppressedSinceLastLine", suppressed).Msg(msg)
	}
	if forbidden {
		return eventgrid.Errorf(eventgrid.EForbidden, "%s", denied.Message())
	}
	var f *auth.Failure
	if errors.As(err, &f) {
		for _, ch := range f.Challenges() {
			c.Response().Header().Add(echo.HeaderWWWAuthenticate, ch)
		}
		return eventgrid.Errorf(eventgrid.EUnauthorized, "%s", f.Message())
	}
	return eventgrid.Errorf(eventgrid.EUnauthorized, "The request is not authorized: present a trusted client certificate, a valid aeg-sas-key, or a SAS token in aeg-sas-token or Authorization: SharedAccessSignature.")
}

// remoteHost is the address of the connection's peer: unlike
// X-Forwarded-For or X-Real-IP, the client cannot choose it. It is who a
// request comes from, for the shares of streams and long polls too.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// logLimiter lets one event through per interval and counts the others.
type logLimiter struct {
	interval time.Duration

	mu         sync.Mutex
	last       time.Time // of the last event let through; zero before
	suppressed int       // events held back since then
}

// allow reports whether an event at now may be logged and, if so, how many
// were held back since the previous one logged.
func (l *logLimiter) allow(now time.Time) (suppressed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < l.interval {
		l.suppressed++
		return 0, false
	}
	suppressed, l.suppressed, l.last = l.suppressed, 0, now
	return suppressed, true
}
