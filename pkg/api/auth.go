package api

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// Authenticator checks a request's credentials (package auth implements it).
type Authenticator interface {
	// Authenticate returns nil when the request may proceed. The reason is
	// for the log only: it is never sent to the client, and never holds a
	// credential. An error with an AuthFailureReason() string method names
	// the kind of failure for the auth failure metric.
	Authenticate(r *http.Request) (reason string, err error)
}

// UnknownAuthFailure is the metric reason of a refusal whose error does not
// say its kind.
const UnknownAuthFailure = "unknown"

// DefaultAuthFailureLogInterval is the least time between two log lines
// about refused requests.
const DefaultAuthFailureLogInterval = 10 * time.Second

// authenticate refuses requests that fail the authenticator with 401 and
// the same message whatever failed, so a client learns nothing about which
// credential was wrong. Every refusal is counted; the log gets at most one
// line per interval, with the number of refusals it did not show.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.opts.Authenticator == nil {
			return next(c)
		}
		if reason, err := s.opts.Authenticator.Authenticate(c.Request()); err != nil {
			kind := UnknownAuthFailure
			var k interface{ AuthFailureReason() string }
			if errors.As(err, &k) {
				kind = k.AuthFailureReason()
			}
			s.opts.Metrics.AuthFailed(kind)
			if suppressed, ok := s.authLog.allow(time.Now()); ok {
				s.log.Warn().Str("reason", kind).Str("detail", reason).Str("remote", remoteHost(c.Request())).
					Str("method", c.Request().Method).Str("path", c.Request().URL.Path).
					Int("suppressedSinceLastLine", suppressed).Msg("request refused: not authenticated")
			}
			return eventgrid.Errorf(eventgrid.EUnauthorized, "The request is not authorized: present a trusted client certificate, a valid aeg-sas-key, or a SAS token in aeg-sas-token or Authorization: SharedAccessSignature.")
		}
		return next(c)
	}
}

// remoteHost is the address of the connection's peer: unlike X-Forwarded-For
// or X-Real-IP, the client cannot choose it.
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
