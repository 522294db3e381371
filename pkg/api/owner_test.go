package api_test

import (
	"net/http"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// TestDeclaredResources: a topic or subscription a declaration manages
// answers 409 Conflict to a PUT or DELETE, naming where it is declared and
// how to change it there, and its GET shows properties.managedBy. What the
// API created behaves as before, and a PUT that carries managedBy (a GET's
// body sent back) is taken as the API's.
func TestDeclaredResources(t *testing.T) {
	ts := MustOpenServer(t)
	ctx := t.Context()
	owner := eventgrid.Owner{Source: eventgrid.SourceDesiredConfigFile, File: "/etc/edgegrid/desired.json"}
	if _, _, err := ts.Registry.PutTopic(ctx, eventgrid.Topic{Name: "declared", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	sub := eventgrid.EventSubscription{Topic: "declared", Name: "hot", Owner: owner,
		Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "http://127.0.0.1:9/hook"}}
	if _, _, err := ts.Registry.PutSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	where := []string{"desired_config_file /etc/edgegrid/desired.json", "edit that file"}

	for _, tc := range []struct {
		method, path string
		body         any
		what         string
	}{
		{http.MethodPut, "/topics/declared", map[string]any{}, `Topic "declared"`},
		{http.MethodDelete, "/topics/declared", nil, `Topic "declared"`},
		{http.MethodPut, "/topics/declared/eventSubscriptions/hot", webhook(nil), `Event subscription "hot" of topic "declared"`},
		{http.MethodDelete, "/topics/declared/eventSubscriptions/HOT", nil, `Event subscription "hot" of topic "declared"`},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := ts.do(t, tc.method, tc.path, ctJSON, tc.body)
			mustErrorContaining(t, r, http.StatusConflict, eventgrid.EConflict, append(where, tc.what)...)
		})
	}
	t.Run("GET shows the owner", func(t *testing.T) {
		r := ts.do(t, http.MethodGet, "/topics/declared", "", nil)
		mustStatus(t, r, http.StatusOK)
		if got := at(mustObject(t, r.Body), "properties.managedBy"); got != "desired_config_file:/etc/edgegrid/desired.json" {
			t.Errorf("topic managedBy = %v", got)
		}
		r = ts.do(t, http.MethodGet, "/topics/declared/eventSubscriptions/hot", "", nil)
		mustStatus(t, r, http.StatusOK)
		if got := at(mustObject(t, r.Body), "properties.managedBy"); got != "desired_config_file:/etc/edgegrid/desired.json" {
			t.Errorf("subscription managedBy = %v", got)
		}
	})
	t.Run("the API's own resources are unaffected", func(t *testing.T) {
		// A body copied from a declared resource's GET: managedBy is
		// read-only, so the result is the API's.
		got := ts.MustPutSubscription(t, "declared", "by-api", map[string]any{"properties": map[string]any{
			"managedBy":   "desired_config",
			"destination": map[string]any{"endpointType": "WebHook", "properties": map[string]any{"endpointUrl": "http://127.0.0.1:9/api"}},
		}})
		if v := at(got, "properties.managedBy"); v != nil {
			t.Errorf("PUT answered managedBy %v, want none", v)
		}
		r := ts.do(t, http.MethodGet, "/topics/declared/eventSubscriptions/by-api", "", nil)
		mustStatus(t, r, http.StatusOK)
		// The GET's body, PUT back as it is.
		mustStatus(t, ts.do(t, http.MethodPut, "/topics/declared/eventSubscriptions/by-api", ctJSON, string(r.Body)), http.StatusOK)
		mustStatus(t, ts.do(t, http.MethodDelete, "/topics/declared/eventSubscriptions/by-api", "", nil), http.StatusOK)
		ts.MustPutTopic(t, "api", "")
		mustStatus(t, ts.do(t, http.MethodDelete, "/topics/api", "", nil), http.StatusOK)
	})
	t.Run("a topic holding a declared subscription is not the API's to delete", func(t *testing.T) {
		ts.MustPutTopic(t, "api", "")
		s := sub
		s.Topic = "api"
		if _, _, err := ts.Registry.PutSubscription(ctx, s); err != nil {
			t.Fatal(err)
		}
		r := ts.do(t, http.MethodDelete, "/topics/api", "", nil)
		mustErrorContaining(t, r, http.StatusConflict, eventgrid.EConflict, `Topic "api" cannot be deleted`, `"hot"`, "edit that file")
	})
}
