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

// routes maps the whole API surface (docs/api.md). Each route is
// registered through handle, with the permission routeTable gives it
// (docs/security.md#who-may-do-what).
func (s *Server) routes() {
	if s.opts.HealthProbe {
		s.handle(http.MethodGet, "/healthz", s.health)
		s.handle(http.MethodGet, "/readyz", s.ready)
	}
	if s.svc.MetricsHandler != nil {
		// The api-version the docs show on the metrics URL is tolerated,
		// not required.
		s.handle(http.MethodGet, "/metrics", echo.WrapHandler(s.svc.MetricsHandler))
	} else {
		// Metrics are off by default: say which key turns them on rather
		// than that the path is unknown (docs/metrics.md).
		s.handle(http.MethodGet, "/metrics", metricsOff)
	}

	// The api-version check is route middleware, not a group's: an echo
	// group with middleware registers a catch-all route for its prefix, and
	// with the prefix "" that would turn every unknown path and wrong method
	// into an api-version error instead of 404 or 405.
	// The credential check comes first (handle puts it there), so that an
	// unauthenticated client learns nothing, not even whether its
	// api-version is right.
	edge := requireAPIVersion(edgeAPIVersions)
	const sub = "/topics/{topic}/eventSubscriptions/{sub}"
	s.handle(http.MethodGet, "/topics", s.listTopics, edge)
	s.handle(http.MethodPut, "/topics/{topic}", s.putTopic, edge)
	s.handle(http.MethodGet, "/topics/{topic}", s.getTopic, edge)
	s.handle(http.MethodDelete, "/topics/{topic}", s.deleteTopic, edge)

	s.handle(http.MethodGet, "/topics/{topic}/eventSubscriptions", s.listSubscriptions, edge)
	s.handle(http.MethodPut, sub, s.putSubscription, edge)
	s.handle(http.MethodGet, sub, s.getSubscription, oneSegment, edge)
	s.handle(http.MethodDelete, sub, s.deleteSubscription, oneSegment, edge)
	s.echo.Pre(subscriptionView)
	s.handle(http.MethodPost, sub+"/getFullUrl", s.getFullURL, requireView(viewFullURL), edge)
	// Other methods would otherwise reach the subscription's routes with
	// "$getFullUrl/{s}" for a name.
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		s.handle(m, sub+"/getFullUrl", methodNotAllowed, requireView(viewFullURL))
	}

	s.handle(http.MethodPost, "/topics/{topic}/events", s.publishBatch, edge)
	s.handle(http.MethodPost, "/topics/{topic}/events/{id}", s.publishOne, edge)

	s.handle(http.MethodPost, "/topics/{topic}/api/events", s.publishCloud, requireAPIVersion(cloudAPIVersions))

	s.namespaceRoutes()
	if s.svc.Board != nil {
		s.inspectionRoutes(edge)
	}

	if s.svc.Console != nil {
		page := echo.WrapHandler(s.svc.Console)
		for _, p := range []string{consolePath, consolePath + "/*"} {
			s.handle(http.MethodGet, p, page)
			s.handle(http.MethodHead, p, page)
		}
	}
}

// consolePath is where the console page is served; its paths are file
// paths, left as they are by canonicalPath.
const consolePath = "/console"

// subscriptionView rewrites "/topics/{t}/eventSubscriptions/{s}/{view}",
// where view is getFullUrl or one of the inspection API's (events,
// failures, deliveries, history), in any case, to
// "/topics/{t}/eventSubscriptions/${view}/{s}", for the reason splitAction
// gives: a literal after the subscription's name would stop it being the
// last segment of its routes, and echo would no longer hand a name holding
// a '/' to the handlers that refuse it by name.
func subscriptionView(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := c.Request().URL
		if p, view, ok := viewPath(u.Path); ok {
			u.Path = p
			if u.RawPath != "" {
				u.RawPath, _, _ = viewPath(u.RawPath)
			}
			c.Set(viewKey, view)
		}
		return next(c)
	}
}

// viewKey holds, in the echo context, the view of a request
// subscriptionView rewrote.
const viewKey = "edgegrid.subscriptionView"

// The views written after a subscription's name.
const viewFullURL = "getFullUrl"

var subscriptionViews = []string{viewFullURL, "events", "failures", "deliveries", "history"}

// viewPath returns the rewritten form of a view's path, and the view.
func viewPath(p string) (string, string, bool) {
	if strings.Count(p, "/") != 5 {
		return p, "", false // not six segments: spares the split below
	}
	parts := strings.Split(p, "/")
	if len(parts) != 6 || parts[0] != "" || !strings.EqualFold(parts[1], "topics") ||
		!strings.EqualFold(parts[3], "eventSubscriptions") {
		return p, "", false
	}
	for _, v := range subscriptionViews {
		if strings.EqualFold(parts[5], v) {
			return "/topics/" + parts[2] + "/eventSubscriptions/$" + v + "/" + parts[4], v, true
		}
	}
	return p, "", false
}

// requireView answers 404 to a request that names a rewritten path
// itself, or another view's.
func requireView(view string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Get(viewKey) != view {
				return noRoute()
			}
			return next(c)
		}
	}
}

// oneSegment answers 404 to a request whose subscription name, as routed,
// spans several path segments: a path with more after the name than any
// route has, such as GET …/eventSubscriptions/{s}/unknown, names no
// subscription. (An escaped '/', %2F, stays one segment and is refused as
// a name.)
func oneSegment(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if strings.Contains(c.Param("sub"), "/") {
			return noRoute()
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
	r := s.svc.Readiness
	if r == nil {
		return c.JSON(status, body)
	}
	if !r.Ready() {
		body = map[string]any{"status": "NotReady", "reason": "the desired configuration has not been applied yet"}
		status = http.StatusServiceUnavailable
	}
	if d := r.ReadyDetail(); d != nil {
		body["desiredConfig"] = d
	}
	return c.JSON(status, body)
}

// requireAPIVersion refuses requests whose api-version query parameter is
// missing or not one of accepted.
func requireAPIVersion(accepted []string) echo.MiddlewareFunc {
	list := strings.Join(accepted, ", ")
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			v := apiVersion(c)
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

// apiVersion returns the api-version query parameter, as
// c.QueryParam("api-version") does: the first value. A query with nothing
// to unescape and no ';' (which url.ParseQuery refuses) is read in place,
// without building the whole query's map.
func apiVersion(c echo.Context) string {
	q := c.Request().URL.RawQuery
	if strings.ContainsAny(q, "%+;") {
		return c.QueryParam("api-version")
	}
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if k, v, _ := strings.Cut(pair, "="); k == "api-version" {
			return v
		}
	}
	return ""
}

// fixedSegments are the literal path segments, by position, that clients may
// write in any case; the SDK and the docs disagree on casing.
var fixedSegments = map[int][]string{
	1: {"topics", "healthz", "readyz", "metrics"},
	3: {"eventSubscriptions", "events", "api", "history"},
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

// canonicalise returns p without trailing slashes and with its fixed
// segments written as the router expects them.
func canonicalise(p string) string {
	p = trimTrailingSlashes(p)
	if !needsCanonical(p) {
		return p
	}
	return rewriteSegments(p)
}

// trimTrailingSlashes removes the slashes that end p, but for "/" itself.
func trimTrailingSlashes(p string) string {
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	return p
}

// rewriteSegments writes each fixed segment of p as the router expects it.
func rewriteSegments(p string) string {
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

// fixedByPosition is fixedSegments as an array, by position.
var fixedByPosition = func() (a [5][]string) {
	for i, segs := range fixedSegments {
		a[i] = segs
	}
	return a
}()

// needsCanonical reports whether canonicalise would rewrite a segment of
// p, without splitting it: most paths are written as the router expects.
func needsCanonical(p string) bool {
	var seg3 string
	for i := range len(fixedByPosition) {
		seg, rest, more := strings.Cut(p, "/")
		if i == 3 {
			seg3 = seg
		}
		for _, want := range fixedByPosition[i] {
			if seg != want && strings.EqualFold(seg, want) && (i != 4 || strings.EqualFold(seg3, "api")) {
				return true
			}
		}
		if !more {
			return false
		}
		p = rest
	}
	return false
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
