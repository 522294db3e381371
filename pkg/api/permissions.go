package api

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/auth"
)

// Route is a route of the API and the permission it needs.
type Route struct {
	Method string
	// Path is the route as clients write it, with {topic}, {sub} and {id}
	// for names: "/topics/{topic}/eventSubscriptions/{sub}:receive".
	Path string
	// Permission is what the request's credential must hold; Public routes
	// take no credential.
	Permission auth.Permission
}

// Public is the permission of a route that answers without a credential:
// the probes, the console page's files, and the answers that only say a
// method is not allowed.
const Public auth.Permission = "none"

// routeTable is who may do what (docs/security.md#who-may-do-what): every
// route of the API with the permission it needs. A route is registered
// only through Server.handle, which finds it here or panics, and a test
// walks echo's routes against this table, so that no route can be added
// without saying who may call it. A new action is one line:
// {post, sub + ":redrive", auth.Manage}.
var routeTable = func() []Route {
	const (
		get, put, post, del, head, patch = http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodHead, http.MethodPatch
		sub                              = "/topics/{topic}/eventSubscriptions/{sub}"
	)
	return slices.Concat([]Route{
		{get, "/healthz", Public},
		{get, "/readyz", Public},
		{get, "/metrics", auth.Scrape},
		{get, consolePath, Public},
		{head, consolePath, Public},
		{get, consolePath + "/*", Public},
		{head, consolePath + "/*", Public},

		{get, "/topics", auth.Read},
		{put, "/topics/{topic}", auth.Manage},
		{get, "/topics/{topic}", auth.Read},
		{del, "/topics/{topic}", auth.Manage},
		{get, "/topics/{topic}/eventSubscriptions", auth.Read},
		{put, sub, auth.Manage},
		{get, sub, auth.Read},
		{del, sub, auth.Manage},
		{post, sub + "/getFullUrl", auth.Manage},

		{post, "/topics/{topic}/events", auth.Publish},
		{post, "/topics/{topic}/events/{id}", auth.Publish},
		{post, "/topics/{topic}/api/events", auth.Publish},
		{post, "/topics/{topic}:publish", auth.Publish},
		{post, sub + ":receive", auth.Receive},
		{post, sub + ":acknowledge", auth.Receive},
		{post, sub + ":release", auth.Receive},
		{post, sub + ":reject", auth.Receive},
		{post, sub + ":renewLock", auth.Receive},

		{get, "/topics/{topic}/events", auth.Read}, // the live tail: the publish path, but GET
		{get, "/topics/{topic}/history", auth.Read},
		{get, sub + "/events", auth.Read}, // peek
		{get, sub + "/failures", auth.Read},
		{get, sub + "/deliveries", auth.Read},
		{get, sub + "/history", auth.Read},
		{post, sub + ":retryNow", auth.Manage},
		{post, sub + ":redrive", auth.Manage},
		{post, sub + ":pause", auth.Manage},
		{post, sub + ":resume", auth.Manage},
		{post, sub + ":purge", auth.Manage},
	},
		// The other methods on a subscription's views answer 405, and
		// nothing else.
		notAllowed(sub+"/getFullUrl", get, put, del, patch),
		notAllowed(sub+"/events", post, put, del, patch),
		notAllowed(sub+"/failures", post, put, del, patch),
		notAllowed(sub+"/deliveries", post, put, del, patch),
		notAllowed(sub+"/history", post, put, del, patch),
	)
}()

// notAllowed returns Public routes of path for methods.
func notAllowed(path string, methods ...string) []Route {
	out := make([]Route, len(methods))
	for i, m := range methods {
		out[i] = Route{m, path, Public}
	}
	return out
}

// RouteTable returns every route the API can serve, with the permission
// each needs: the table docs/security.md shows. Which of them a Server
// serves depends on its Options (the probes, metrics, the console, the
// inspection API).
func RouteTable() []Route { return slices.Clone(routeTable) }

// rule is a route of the table as the server registers it.
type rule struct {
	Route
	echoPath string
	// resource is the path of what a request of the route acts on, by
	// segment: a literal, or a parameter's name in braces. It is the
	// route's path without its action: a SAS token reaches the route when
	// it was signed for this path or one above it.
	resource []string
}

// rules are the routes of the table by method and path.
var rules = func() map[string]*rule {
	m := make(map[string]*rule, len(routeTable))
	for _, rt := range routeTable {
		k := rt.Method + " " + rt.Path
		if m[k] != nil {
			panic("api: route table: " + k + " twice")
		}
		res, _, _ := strings.Cut(rt.Path, "}:") // "/topics/{topic}:publish" → "/topics/{topic"
		if len(res) < len(rt.Path) {
			res += "}"
		}
		m[k] = &rule{Route: rt, echoPath: echoPath(rt.Path), resource: strings.Split(res, "/")[1:]}
	}
	return m
}()

var braces = regexp.MustCompile(`\{(\w+)\}`)

// echoPath is the path echo routes a request of p on, once splitAction and
// subscriptionView have rewritten it: "…/{sub}:receive" is
// "…/$receive/:sub", "…/{sub}/events" is "…/$events/:sub", and {name}
// is :name.
func echoPath(p string) string {
	segs := strings.Split(p, "/")
	n := len(segs)
	if name, action, ok := strings.Cut(segs[n-1], "}:"); ok {
		segs[n-1] = "$" + action + "/" + name + "}"
	} else if n >= 3 && segs[n-2] == "{sub}" && segs[n-3] == "eventSubscriptions" && slices.Contains(subscriptionViews, segs[n-1]) {
		segs[n-2], segs[n-1] = "$"+segs[n-1], "{sub}"
	}
	return braces.ReplaceAllString(strings.Join(segs, "/"), ":$1")
}

// resourceOf returns the path of what c's request acts on.
func (r *rule) resourceOf(c echo.Context) string {
	var b strings.Builder
	for _, seg := range r.resource {
		b.WriteByte('/')
		if strings.HasPrefix(seg, "{") {
			b.WriteString(param(c, seg[1:len(seg)-1]))
		} else {
			b.WriteString(seg)
		}
	}
	return b.String()
}

// handle registers the route of the table with method and path (as the
// table writes it): the credential check for its permission first, then
// mw, then h. A route missing from the table panics, so that New fails
// and every test with it.
func (s *Server) handle(method, path string, h echo.HandlerFunc, mw ...echo.MiddlewareFunc) {
	r := rules[method+" "+path]
	if r == nil {
		panic(fmt.Sprintf("api: %s %s is not in the route table (permissions.go): give it the permission it needs", method, path))
	}
	if r.Permission != Public {
		mw = append([]echo.MiddlewareFunc{s.authorize(r)}, mw...)
	}
	s.echo.Add(method, r.echoPath, h, mw...)
}
