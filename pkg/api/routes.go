package api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// The api-version values each family of routes accepts
// (docs/design.md#api-versions).
var (
	edgeAPIVersions  = []string{"2019-01-01-preview", "2019-01-01"}
	cloudAPIVersions = []string{"2018-01-01"}
)

// routes maps the whole API surface (docs/api.md).
func (s *Server) routes() {
	e := s.echo
	if s.opts.HealthProbe {
		e.GET("/healthz", s.health)
		e.GET("/readyz", s.ready)
	}
	if s.opts.MetricsHandler != nil {
		// The api-version the docs show on the metrics URL is tolerated,
		// not required.
		e.GET("/metrics", echo.WrapHandler(s.opts.MetricsHandler), s.authenticate)
	} else {
		// Metrics are off by default: say which key turns them on rather
		// than that the path is unknown (docs/metrics.md).
		e.GET("/metrics", metricsOff, s.authenticate)
	}

	// The api-version check is route middleware, not a group's: an echo
	// group with middleware registers a catch-all route for its prefix, and
	// with the prefix "" that would turn every unknown path and wrong method
	// into an api-version error instead of 404 or 405.
	// Authentication comes first, so that an unauthenticated client learns
	// nothing, not even whether its api-version is right.
	auth := s.authenticate
	edge := requireAPIVersion(edgeAPIVersions)
	e.GET("/topics", s.listTopics, auth, edge)
	e.PUT("/topics/:topic", s.putTopic, auth, edge)
	e.GET("/topics/:topic", s.getTopic, auth, edge)
	e.DELETE("/topics/:topic", s.deleteTopic, auth, edge)

	e.GET("/topics/:topic/eventSubscriptions", s.listSubscriptions, auth, edge)
	e.PUT("/topics/:topic/eventSubscriptions/:sub", s.putSubscription, auth, edge)
	e.GET("/topics/:topic/eventSubscriptions/:sub", s.getSubscription, auth, edge)
	e.DELETE("/topics/:topic/eventSubscriptions/:sub", s.deleteSubscription, auth, edge)
	e.Pre(fullURLAction)
	const fullURL = "/topics/:topic/eventSubscriptions/$getFullUrl/:sub"
	e.POST(fullURL, s.getFullURL, auth, requireFullURLAction, edge)
	// Other methods would otherwise reach the subscription's routes with
	// "$getFullUrl/{s}" for a name.
	e.Match([]string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch}, fullURL, methodNotAllowed, requireFullURLAction)

	e.POST("/topics/:topic/events", s.publishBatch, auth, edge)
	e.POST("/topics/:topic/events/:id", s.publishOne, auth, edge)

	e.POST("/topics/:topic/api/events", s.publishBatch, auth, requireAPIVersion(cloudAPIVersions))

	s.namespaceRoutes(auth)

	if s.opts.Console != nil {
		page := echo.WrapHandler(s.opts.Console)
		for _, p := range []string{consolePath, consolePath + "/*"} {
			e.GET(p, page)
			e.HEAD(p, page)
		}
	}
}

// consolePath is where the console page is served; its paths are file
// paths, left as they are by canonicalPath.
const consolePath = "/console"

// fullURLAction rewrites "/topics/{t}/eventSubscriptions/{s}/getFullUrl"
// (any case) to "/topics/{t}/eventSubscriptions/$getFullUrl/{s}", for the
// reason splitAction gives: a literal after the subscription's name would
// stop it being the last segment of its routes, and echo would no longer
// hand a name holding a '/' to the handlers that refuse it by name.
func fullURLAction(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		if p, ok := fullURLPath(u.Path); ok {
			u.Path = p
			if u.RawPath != "" {
				u.RawPath, _ = fullURLPath(u.RawPath)
			}
			c.Set(fullURLKey, true)
		}
		return next(c)
	}
}

// fullURLKey marks, in the echo context, a request fullURLAction rewrote.
const fullURLKey = "edgegrid.getFullUrl"

// fullURLPath returns the rewritten form of a getFullUrl path.
func fullURLPath(p string) (string, bool) {
	parts := strings.Split(p, "/")
	if len(parts) != 6 || parts[0] != "" || !strings.EqualFold(parts[1], "topics") ||
		!strings.EqualFold(parts[3], "eventSubscriptions") || !strings.EqualFold(parts[5], "getFullUrl") {
		return p, false
	}
	return "/topics/" + parts[2] + "/eventSubscriptions/$getFullUrl/" + parts[4], true
}

// requireFullURLAction answers 404 to a request that names the rewritten
// path itself.
func requireFullURLAction(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Get(fullURLKey) == nil {
			return eventgrid.Errorf(eventgrid.ENotFound, "No API matches this path.")
		}
		return next(c)
	}
}

func metricsOff(echo.Context) error {
	return eventgrid.Errorf(eventgrid.ENotFound, "Metrics are not served: the broker serves them at /metrics with metrics__reporterType=prometheus.")
}

func methodNotAllowed(echo.Context) error {
	return eventgrid.Errorf(eventgrid.EMethodNotAllowed, "The method is not allowed on this path.")
}

func (s *Server) health(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "Healthy"})
}

// ready answers the readiness probe: 503 until the declared topics and
// event subscriptions have been applied for the first time. Both answers
// carry the declared configuration's status, when there is one.
func (s *Server) ready(c echo.Context) error {
	body := map[string]any{"status": "Ready"}
	status := http.StatusOK
	if s.opts.Ready != nil && !s.opts.Ready() {
		body = map[string]any{"status": "NotReady", "reason": "the desired configuration has not been applied yet"}
		status = http.StatusServiceUnavailable
	}
	if s.opts.ReadyDetail != nil {
		if d := s.opts.ReadyDetail(); d != nil {
			body["desiredConfig"] = d
		}
	}
	return c.JSON(status, body)
}

// requireAPIVersion refuses requests whose api-version query parameter is
// missing or not one of accepted.
func requireAPIVersion(accepted []string) echo.MiddlewareFunc {
	list := strings.Join(accepted, ", ")
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			v := c.QueryParam("api-version")
			for _, a := range accepted {
				if v == a {
					return next(c)
				}
			}
			if v == "" {
				return eventgrid.Errorf(eventgrid.EInvalidAPIVersion, "The api-version query parameter is required; accepted values are %s.", list)
			}
			return eventgrid.Errorf(eventgrid.EInvalidAPIVersion, "api-version %q is not supported on this route; accepted values are %s.", v, list)
		}
	}
}

// fixedSegments are the literal path segments, by position, that clients may
// write in any case; the SDK and the docs disagree on casing.
var fixedSegments = map[int][]string{
	1: {"topics", "healthz", "readyz", "metrics"},
	3: {"eventSubscriptions", "events", "api"},
	4: {"events"},
}

// canonicalPath rewrites the literal segments of the path to the casing the
// router expects and drops a trailing slash (the SDK lists subscriptions
// with one), so routing ignores both.
func canonicalPath(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		if u.Path == consolePath || strings.HasPrefix(u.Path, consolePath+"/") {
			return next(c)
		}
		u.Path = canonicalise(u.Path)
		if u.RawPath != "" {
			u.RawPath = canonicalise(u.RawPath)
		}
		return next(c)
	}
}

func canonicalise(p string) string {
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	parts := strings.Split(p, "/")
	changed := false
	for i, seg := range parts {
		for _, want := range fixedSegments[i] {
			if seg != want && strings.EqualFold(seg, want) {
				if i == 4 && !strings.EqualFold(parts[3], "api") {
					continue
				}
				parts[i] = want
				changed = true
			}
		}
	}
	if !changed {
		return p
	}
	return strings.Join(parts, "/")
}

// param returns a path parameter, URL-decoded exactly once. echo routes on
// URL.RawPath when it is set (the path holds an escape that decoding would
// lose, such as %2F) and on the already decoded URL.Path otherwise; only in
// the first case is the parameter still escaped.
func param(c echo.Context, name string) string {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v
	}
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}
