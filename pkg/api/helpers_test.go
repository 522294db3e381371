package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// The api-version values the routes accept.
const (
	edgeVersion  = "2019-01-01-preview"
	cloudVersion = "2018-01-01"
)

// Content types used throughout.
const (
	ctJSON        = "application/json"
	ctCloudEvent  = "application/cloudevents+json"
	ctCloudEvents = "application/cloudevents-batch+json"
)

// testServer is a real API server on a loopback port, over a real registry,
// with a recording publisher and subscription observer.
type testServer struct {
	URL      string // http://127.0.0.1:<port>
	Client   *http.Client
	Registry *registry.Registry
	Recorder *mock.Recorder
	Observer *mock.SubscriptionObserver
	Server   *api.Server
}

// serverConfig is what MustOpenServer builds the server from; options
// change it.
type serverConfig struct {
	api      api.Options
	svc      api.Services
	registry registry.Options
}

type serverOption func(*serverConfig)

// withAPI changes the API options.
func withAPI(f func(*api.Options)) serverOption {
	return func(c *serverConfig) { f(&c.api) }
}

// withServices changes the API's services beyond the registry and the
// recording publisher.
func withServices(f func(*api.Services)) serverOption {
	return func(c *serverConfig) { f(&c.svc) }
}

// withRegistry changes the registry options.
func withRegistry(f func(*registry.Options)) serverOption {
	return func(c *serverConfig) { f(&c.registry) }
}

// MustOpenServer starts an API server on 127.0.0.1:0 with the default
// options (webhooks may use http, so tests need no TLS) changed by opts,
// and closes it when the test ends.
func MustOpenServer(tb testing.TB, opts ...serverOption) *testServer {
	tb.Helper()
	cfg := serverConfig{api: api.DefaultOptions(), registry: registry.DefaultOptions()}
	cfg.registry.WebhookHTTPSOnly = false
	for _, o := range opts {
		o(&cfg)
	}
	ts := &testServer{
		Recorder: &mock.Recorder{},
		Observer: &mock.SubscriptionObserver{},
		Client:   &http.Client{Timeout: 10 * time.Second},
	}
	ts.Registry = registry.New(cfg.registry, ts.Observer)
	cfg.svc.Resources, cfg.svc.Publisher = ts.Registry, registry.NewRouter(ts.Registry, ts.Recorder)
	srv := api.New(cfg.api, cfg.svc, zerolog.Nop())
	ts.Server = srv
	addr, err := srv.Open("127.0.0.1:0", nil)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		// Close the client's idle connections first: one it dialled but never
		// used is, to the server, a new connection that Shutdown waits up to
		// 5 s for.
		ts.Client.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	ts.URL = "http://" + addr.String()
	return ts
}

// url returns the absolute URL of path with api-version=version appended
// (nothing appended when version is empty).
func (ts *testServer) url(path, version string) string {
	if version == "" {
		return ts.URL + path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return ts.URL + path + sep + "api-version=" + version
}

// response is what a request returned.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends method path with the edge api-version; see brokertest.Do for
// body.
func (ts *testServer) do(tb testing.TB, method, path, contentType string, body any) response {
	tb.Helper()
	return ts.doVersion(tb, method, path, edgeVersion, contentType, body)
}

// doVersion is do with an explicit api-version ("" for none).
func (ts *testServer) doVersion(tb testing.TB, method, path, version, contentType string, body any) response {
	tb.Helper()
	st, h, b := brokertest.Do(tb, ts.Client, method, ts.url(path, version), contentType, body)
	return response{st, h, b}
}

// send sends a request built with brokertest.NewRequest.
func (ts *testServer) send(tb testing.TB, req *http.Request) response {
	tb.Helper()
	st, h, b := brokertest.Send(tb, ts.Client, req)
	return response{st, h, b}
}

// MustPutTopic creates or updates a topic with the given input schema ("" for
// the default) and fails tb unless that succeeds.
func (ts *testServer) MustPutTopic(tb testing.TB, name string, schema eventgrid.InputSchema) {
	tb.Helper()
	body := map[string]any{"properties": map[string]any{}}
	if schema != "" {
		body["properties"] = map[string]any{"inputSchema": schema}
	}
	r := ts.do(tb, http.MethodPut, "/topics/"+name, ctJSON, body)
	mustStatus(tb, r, http.StatusOK)
}

// MustPutSubscription puts a subscription with the given JSON body and fails
// tb unless that succeeds. It returns the decoded response.
func (ts *testServer) MustPutSubscription(tb testing.TB, topic, name string, body any) map[string]any {
	tb.Helper()
	r := ts.do(tb, http.MethodPut, "/topics/"+topic+"/eventSubscriptions/"+name, ctJSON, body)
	mustStatus(tb, r, http.StatusOK)
	return mustObject(tb, r.Body)
}

// webhook returns a subscription body delivering to an http webhook with
// the given filter (nil for none).
func webhook(filter any) map[string]any {
	props := map[string]any{
		"destination": map[string]any{
			"endpointType": "WebHook",
			"properties":   map[string]any{"endpointUrl": "http://127.0.0.1:9/hook"},
		},
	}
	if filter != nil {
		props["filter"] = filter
	}
	return map[string]any{"properties": props}
}

// mustStatus fails tb unless r has the given status.
func mustStatus(tb testing.TB, r response, want int) {
	tb.Helper()
	if r.Status != want {
		tb.Fatalf("status = %d, want %d; body: %s", r.Status, want, brokertest.Abbrev(r.Body))
	}
}

// mustError fails tb unless r is an error envelope with the given status,
// the matching error.code and details.code code. It returns the message.
func mustError(tb testing.TB, r response, status int, code string) string {
	tb.Helper()
	mustStatus(tb, r, status)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, ctJSON) {
		tb.Errorf("error Content-Type = %q, want %s", ct, ctJSON)
	}
	env := brokertest.MustDecodeError(tb, r.Body)
	if want := statusNames[status]; env.Error.Code != want {
		tb.Errorf("error.code = %q, want %q", env.Error.Code, want)
	}
	if env.Error.Details.Code != code {
		tb.Fatalf("error.details.code = %q, want %q; message: %s", env.Error.Details.Code, code, env.Error.Details.Message)
	}
	return env.Error.Details.Message
}

// mustErrorContaining is mustError that also requires each of parts in the
// message, ignoring case.
func mustErrorContaining(tb testing.TB, r response, status int, code string, parts ...string) {
	tb.Helper()
	msg := mustError(tb, r, status, code)
	for _, p := range parts {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(p)) {
			tb.Errorf("message %q does not mention %q", msg, p)
		}
	}
}

// statusNames are the envelope's error.code values by status.
var statusNames = map[int]string{
	http.StatusBadRequest:            "BadRequest",
	http.StatusUnauthorized:          "Unauthorized",
	http.StatusForbidden:             "Forbidden",
	http.StatusNotFound:              "NotFound",
	http.StatusMethodNotAllowed:      "MethodNotAllowed",
	http.StatusConflict:              "Conflict",
	http.StatusRequestEntityTooLarge: "RequestEntityTooLarge",
	http.StatusUnsupportedMediaType:  "UnsupportedMediaType",
	http.StatusServiceUnavailable:    "ServiceUnavailable",
	http.StatusInternalServerError:   "InternalServerError",
}

// mustObject decodes a JSON object.
func mustObject(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	brokertest.MustUnmarshal(tb, b, &m)
	return m
}

// mustArray decodes a JSON array of objects.
func mustArray(tb testing.TB, b []byte) []map[string]any {
	tb.Helper()
	var a []map[string]any
	brokertest.MustUnmarshal(tb, b, &a)
	return a
}

// at returns the value at a dot-separated path of nested objects, or nil.
func at(v any, path string) any {
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[seg]
	}
	return v
}

// jsonText re-encodes v compactly, for comparisons.
func jsonText(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return string(b)
}

// newServer is an API server over a fresh registry whose publications are
// recorded and dropped, with svc's other services.
func newServer(opts api.Options, svc api.Services, log zerolog.Logger) *api.Server {
	reg := registry.New(registry.DefaultOptions(), &mock.SubscriptionObserver{})
	svc.Resources, svc.Publisher = reg, registry.NewRouter(reg, &mock.Recorder{})
	return api.New(opts, svc, log)
}
