package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/auth"
	"github.com/edgegrid/edgegrid/pkg/inspect"
)

// noBoard is a Board for a server that serves no request.
type noBoard struct{}

func (noBoard) Topic(string) *inspect.Topic      { return nil }
func (noBoard) Subscription(uint64) *inspect.Sub { return nil }

// Every route echo serves, with every option that adds routes on, is in
// the route table, and every route of the table is served: a route added
// with echo directly, without a permission, fails here.
func TestRouteTable_EveryRouteDeclared(t *testing.T) {
	opts := DefaultOptions()
	opts.HealthProbe = true
	s := New(opts, Services{MetricsHandler: http.NotFoundHandler(), Console: http.NotFoundHandler(), Board: noBoard{}}, zerolog.Nop())
	declared := map[string]bool{}
	for _, r := range rules {
		declared[r.Method+" "+r.echoPath] = true
	}
	served := map[string]bool{}
	for _, r := range s.echo.Routes() {
		k := r.Method + " " + r.Path
		served[k] = true
		if !declared[k] {
			t.Errorf("echo serves %s, which the route table does not declare: add it to routeTable with its permission and register it with Server.handle", k)
		}
	}
	for k := range declared {
		if !served[k] {
			t.Errorf("the route table declares %s, which no option makes the server serve", k)
		}
	}
}

// The table follows the rule of docs/security.md#who-may-do-what: reading
// is GET (the metrics are scrape), changing is PUT and DELETE, and a POST
// is a publish, a receive or settlement of the namespace data plane, or
// else manage (getFullUrl, :retryNow and every later action). Public
// routes are the probes, the console's files, and answers that only say
// 405.
func TestRouteTable_Policy(t *testing.T) {
	publish := []string{"/topics/{topic}/events", "/topics/{topic}/events/{id}", "/topics/{topic}/api/events", "/topics/{topic}:publish"}
	receive := []string{":receive", ":acknowledge", ":release", ":reject", ":renewLock"}
	public := []string{"/healthz", "/readyz", consolePath, consolePath + "/*"}
	for _, r := range RouteTable() {
		var want auth.Permission
		switch {
		case contains(public, r.Path):
			want = Public
		case r.Path == "/metrics":
			want = auth.Scrape
		case isView(r.Path) && r.Method != viewMethod(r.Path):
			want = Public // the method is not the view's: 405, and nothing else
		case r.Method == http.MethodGet:
			want = auth.Read
		case r.Method == http.MethodPut || r.Method == http.MethodDelete:
			want = auth.Manage
		case r.Method == http.MethodPost && contains(publish, r.Path):
			want = auth.Publish
		case r.Method == http.MethodPost && strings.HasPrefix(r.Path, "/topics/{topic}/eventSubscriptions/{sub}:") && contains(receive, r.Path[strings.LastIndex(r.Path, ":"):]):
			want = auth.Receive
		case r.Method == http.MethodPost:
			want = auth.Manage
		}
		if r.Permission != want {
			t.Errorf("%s %s needs %q, want %q", r.Method, r.Path, r.Permission, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// isView reports whether p is a subscription's view.
func isView(p string) bool {
	for _, v := range subscriptionViews {
		if strings.HasSuffix(p, "/{sub}/"+v) {
			return true
		}
	}
	return false
}

// viewMethod is the method a subscription's view p is read with.
func viewMethod(p string) string {
	if strings.HasSuffix(p, "/getFullUrl") {
		return http.MethodPost
	}
	return http.MethodGet
}

func TestEchoPath(t *testing.T) {
	for public, want := range map[string]string{
		"/topics":                                             "/topics",
		"/topics/{topic}/events":                              "/topics/:topic/events",
		"/topics/{topic}/events/{id}":                         "/topics/:topic/events/:id",
		"/topics/{topic}:publish":                             "/topics/$publish/:topic",
		"/topics/{topic}/history":                             "/topics/:topic/history",
		"/topics/{topic}/eventSubscriptions/{sub}:receive":    "/topics/:topic/eventSubscriptions/$receive/:sub",
		"/topics/{topic}/eventSubscriptions/{sub}/events":     "/topics/:topic/eventSubscriptions/$events/:sub",
		"/topics/{topic}/eventSubscriptions/{sub}/getFullUrl": "/topics/:topic/eventSubscriptions/$getFullUrl/:sub",
		"/console/*":                                          "/console/*",
	} {
		if got := echoPath(public); got != want {
			t.Errorf("echoPath(%q) = %q, want %q", public, got, want)
		}
	}
	for path, want := range map[string]string{
		"POST /topics/{topic}:publish":                          "/topics/{topic}",
		"POST /topics/{topic}/eventSubscriptions/{sub}:receive": "/topics/{topic}/eventSubscriptions/{sub}",
		"GET /topics/{topic}/eventSubscriptions/{sub}/events":   "/topics/{topic}/eventSubscriptions/{sub}/events",
		"POST /topics/{topic}/events/{id}":                      "/topics/{topic}/events/{id}",
		"GET /metrics":                                          "/metrics",
	} {
		if got := "/" + strings.Join(rules[path].resource, "/"); got != want {
			t.Errorf("resource of %s = %q, want %q", path, got, want)
		}
	}
}
