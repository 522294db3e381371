package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
)

// egEvent is a valid EventGridSchema event with the given id.
func egEvent(id string) map[string]any {
	return map[string]any{
		"id": id, "subject": "/s", "eventType": "T", "eventTime": "2020-01-01T00:00:00Z",
		"dataVersion": "1", "data": map[string]any{"n": 1},
	}
}

// TestRoutes walks every route of the route table in order, each answering
// 200.
func TestRoutes(t *testing.T) {
	ts := MustOpenServer(t)
	steps := []struct {
		name, method, path, version string
		body                        any
		check                       func(t *testing.T, r response)
	}{
		{"PutTopic", http.MethodPut, "/topics/t1", edgeVersion, map[string]any{"properties": map[string]any{}}, func(t *testing.T, r response) {
			if got := at(mustObject(t, r.Body), "name"); got != "t1" {
				t.Errorf("name = %v, want t1", got)
			}
		}},
		{"GetTopic", http.MethodGet, "/topics/t1", edgeVersion, nil, func(t *testing.T, r response) {
			if got := at(mustObject(t, r.Body), "properties.inputSchema"); got != "EventGridSchema" {
				t.Errorf("inputSchema = %v, want EventGridSchema", got)
			}
		}},
		{"ListTopics", http.MethodGet, "/topics", edgeVersion, nil, func(t *testing.T, r response) {
			if a := mustArray(t, r.Body); len(a) != 1 || a[0]["name"] != "t1" {
				t.Errorf("list = %s, want [t1]", r.Body)
			}
		}},
		{"PutSubscription", http.MethodPut, "/topics/t1/eventSubscriptions/s1", edgeVersion, webhook(nil), func(t *testing.T, r response) {
			if got := at(mustObject(t, r.Body), "name"); got != "s1" {
				t.Errorf("name = %v, want s1", got)
			}
		}},
		{"GetSubscription", http.MethodGet, "/topics/t1/eventSubscriptions/s1", edgeVersion, nil, func(t *testing.T, r response) {
			if got := at(mustObject(t, r.Body), "properties.topic"); got != "t1" {
				t.Errorf("properties.topic = %v, want t1", got)
			}
		}},
		{"ListSubscriptions", http.MethodGet, "/topics/t1/eventSubscriptions", edgeVersion, nil, func(t *testing.T, r response) {
			if a := mustArray(t, r.Body); len(a) != 1 || a[0]["name"] != "s1" {
				t.Errorf("list = %s, want [s1]", r.Body)
			}
		}},
		{"ListSubscriptionsTrailingSlash", http.MethodGet, "/topics/t1/eventSubscriptions/", edgeVersion, nil, func(t *testing.T, r response) {
			if a := mustArray(t, r.Body); len(a) != 1 {
				t.Errorf("list = %s, want one subscription", r.Body)
			}
		}},
		{"ListTopicsTrailingSlash", http.MethodGet, "/topics/", edgeVersion, nil, func(t *testing.T, r response) {
			if a := mustArray(t, r.Body); len(a) != 1 {
				t.Errorf("list = %s, want one topic", r.Body)
			}
		}},
		{"PublishBatch", http.MethodPost, "/topics/t1/events", edgeVersion, []any{egEvent("1"), egEvent("2")}, nil},
		{"PublishSingle", http.MethodPost, "/topics/t1/events/3", edgeVersion, egEvent("3"), nil},
		{"PublishCloudAlias", http.MethodPost, "/topics/t1/api/events", cloudVersion, []any{egEvent("4")}, nil},
		{"DeleteSubscription", http.MethodDelete, "/topics/t1/eventSubscriptions/s1", edgeVersion, nil, func(t *testing.T, r response) {
			if len(r.Body) != 0 {
				t.Errorf("body = %q, want empty", r.Body)
			}
		}},
		{"DeleteTopic", http.MethodDelete, "/topics/t1", edgeVersion, nil, func(t *testing.T, r response) {
			if len(r.Body) != 0 {
				t.Errorf("body = %q, want empty", r.Body)
			}
		}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			ct := ""
			if s.body != nil {
				ct = ctJSON
			}
			r := ts.doVersion(t, s.method, s.path, s.version, ct, s.body)
			mustStatus(t, r, http.StatusOK)
			if s.check != nil {
				s.check(t, r)
			}
		})
	}
	var ids []string
	for _, ev := range ts.Recorder.Events() {
		ids = append(ids, ev.ID)
	}
	if want := []string{"1", "2", "3", "4"}; !slices.Equal(ids, want) {
		t.Errorf("published ids = %v, want %v", ids, want)
	}
}

func TestAPIVersion(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", "")
	ts.MustPutSubscription(t, "t", "s", webhook(nil))
	type route struct {
		name, method, path string
		body               any
		cloud              bool
	}
	routes := []route{
		{"PutTopic", http.MethodPut, "/topics/t", map[string]any{}, false},
		{"GetTopic", http.MethodGet, "/topics/t", nil, false},
		{"ListTopics", http.MethodGet, "/topics", nil, false},
		{"PutSubscription", http.MethodPut, "/topics/t/eventSubscriptions/s", webhook(nil), false},
		{"GetSubscription", http.MethodGet, "/topics/t/eventSubscriptions/s", nil, false},
		{"ListSubscriptions", http.MethodGet, "/topics/t/eventSubscriptions", nil, false},
		{"PublishBatch", http.MethodPost, "/topics/t/events", []any{egEvent("1")}, false},
		{"PublishSingle", http.MethodPost, "/topics/t/events/1", egEvent("1"), false},
		{"PublishCloudAlias", http.MethodPost, "/topics/t/api/events", []any{egEvent("1")}, true},
	}
	versions := []struct {
		version     string
		edge, cloud bool // accepted on edge routes, on the alias
	}{
		{"", false, false},
		{edgeVersion, true, false},
		{"2019-01-01", true, false},
		{cloudVersion, false, true},
		{"2019-01-01-PREVIEW", false, false},
		{"2020-06-01", false, false},
	}
	for _, rt := range routes {
		for _, v := range versions {
			name := v.version
			if name == "" {
				name = "Missing"
			}
			t.Run(rt.name+"/"+name, func(t *testing.T) {
				ct := ""
				if rt.body != nil {
					ct = ctJSON
				}
				r := ts.doVersion(t, rt.method, rt.path, v.version, ct, rt.body)
				if ok := v.edge && !rt.cloud || v.cloud && rt.cloud; ok {
					mustStatus(t, r, http.StatusOK)
					return
				}
				want := "api-version"
				if v.version != "" {
					want = v.version
				}
				mustErrorContaining(t, r, http.StatusBadRequest, eventgrid.EInvalidAPIVersion, want)
			})
		}
	}
	t.Run("DeleteWithoutVersion", func(t *testing.T) {
		for _, p := range []string{"/topics/t/eventSubscriptions/s", "/topics/t"} {
			mustError(t, ts.doVersion(t, http.MethodDelete, p, "", "", nil), http.StatusBadRequest, eventgrid.EInvalidAPIVersion)
		}
		if _, err := ts.Registry.Subscription(t.Context(), "t", "s"); err != nil {
			t.Errorf("subscription deleted despite the refusal: %v", err)
		}
	})
}

func TestRoutes_CaseInsensitiveSegments(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "x", "")
	tests := []struct {
		name, method, path, version string
		body                        any
	}{
		{"ListTopics", http.MethodGet, "/Topics", edgeVersion, nil},
		{"GetTopic", http.MethodGet, "/TOPICS/x", edgeVersion, nil},
		{"PutSubscription", http.MethodPut, "/Topics/x/EventSubscriptions/s", edgeVersion, webhook(nil)},
		{"ListSubscriptions", http.MethodGet, "/Topics/x/EventSubscriptions", edgeVersion, nil},
		{"ListSubscriptionsSlash", http.MethodGet, "/topics/x/EVENTSUBSCRIPTIONS/", edgeVersion, nil},
		{"GetSubscription", http.MethodGet, "/topics/x/eventsubscriptions/s", edgeVersion, nil},
		{"PublishBatch", http.MethodPost, "/Topics/x/Events", edgeVersion, []any{egEvent("1")}},
		{"PublishSingle", http.MethodPost, "/topics/x/EVENTS/2", edgeVersion, egEvent("2")},
		{"PublishCloudAlias", http.MethodPost, "/topics/x/Api/Events", cloudVersion, []any{egEvent("3")}},
		{"TopicNameCase", http.MethodGet, "/topics/X/eventSubscriptions/S", edgeVersion, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := ""
			if tt.body != nil {
				ct = ctJSON
			}
			mustStatus(t, ts.doVersion(t, tt.method, tt.path, tt.version, ct, tt.body), http.StatusOK)
		})
	}
	if n := len(ts.Recorder.Events()); n != 3 {
		t.Errorf("published %d events, want 3", n)
	}
}

func TestRoutes_UnknownPathAndMethod(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", "")
	tests := []struct {
		name, method, path, version string
		status                      int
		code                        string
	}{
		{"UnknownRoot", http.MethodGet, "/foo", "", http.StatusNotFound, eventgrid.ENotFound},
		{"UnknownRootWithVersion", http.MethodGet, "/foo", edgeVersion, http.StatusNotFound, eventgrid.ENotFound},
		{"UnknownUnderTopic", http.MethodGet, "/topics/t/unknown", edgeVersion, http.StatusNotFound, eventgrid.ENotFound},
		{"UnknownDeep", http.MethodPost, "/a/b/c/d", cloudVersion, http.StatusNotFound, eventgrid.ENotFound},
		{"PatchTopic", http.MethodPatch, "/topics/t", edgeVersion, http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed},
		{"DeleteTopics", http.MethodDelete, "/topics", edgeVersion, http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed},
		{"PutTopicsCollection", http.MethodPut, "/topics/", edgeVersion, http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed},
		{"GetEvents", http.MethodGet, "/topics/t/events", edgeVersion, http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed},
		{"GetCloudAlias", http.MethodGet, "/topics/t/api/events", cloudVersion, http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed},
		{"PostHealth", http.MethodPost, "/healthz", "", http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed},
		{"PostSubscription", http.MethodPost, "/topics/t/eventSubscriptions/s", edgeVersion, http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustError(t, ts.doVersion(t, tt.method, tt.path, tt.version, "", nil), tt.status, tt.code)
		})
	}
}

func TestHealthz(t *testing.T) {
	tests := []struct {
		name   string
		probe  bool
		path   string
		status int
	}{
		{"On", true, "/healthz", http.StatusOK},
		{"OnAnyCase", true, "/HealthZ", http.StatusOK},
		{"Off", false, "/healthz", http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := MustOpenServer(t, withAPI(func(o *api.Options) { o.HealthProbe = tt.probe }))
			r := ts.doVersion(t, http.MethodGet, tt.path, "", "", nil)
			if tt.status != http.StatusOK {
				mustError(t, r, tt.status, eventgrid.ENotFound)
				return
			}
			mustStatus(t, r, http.StatusOK)
			if got := at(mustObject(t, r.Body), "status"); got != "Healthy" {
				t.Errorf("status = %v, want Healthy", got)
			}
		})
	}
}

func TestDeleteTopic_DeletesSubscriptions(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "Orders", "")
	ts.MustPutSubscription(t, "Orders", "b", webhook(nil))
	ts.MustPutSubscription(t, "orders", "A", webhook(nil))
	ts.MustPutTopic(t, "other", "")
	ts.MustPutSubscription(t, "other", "c", webhook(nil))
	ts.Observer.Reset()

	mustStatus(t, ts.do(t, http.MethodDelete, "/topics/ORDERS", "", nil), http.StatusOK)

	var got []string
	for _, c := range ts.Observer.Changes() {
		got = append(got, string(c.Op)+" "+c.Sub.Topic+"/"+c.Sub.Name)
	}
	if want := []string{"delete Orders/A", "delete Orders/b"}; !slices.Equal(got, want) {
		t.Errorf("observer calls = %v, want %v", got, want)
	}
	t.Run("TopicGone", func(t *testing.T) {
		mustError(t, ts.do(t, http.MethodGet, "/topics/Orders", "", nil), http.StatusNotFound, eventgrid.ETopicNotFound)
		mustError(t, ts.do(t, http.MethodGet, "/topics/Orders/eventSubscriptions", "", nil), http.StatusNotFound, eventgrid.ETopicNotFound)
	})
	t.Run("RecreatedTopicIsEmpty", func(t *testing.T) {
		ts.MustPutTopic(t, "orders", "")
		r := ts.do(t, http.MethodGet, "/topics/orders/eventSubscriptions", "", nil)
		mustStatus(t, r, http.StatusOK)
		if a := mustArray(t, r.Body); len(a) != 0 {
			t.Errorf("subscriptions after re-create = %s, want []", r.Body)
		}
	})
	t.Run("OtherTopicUntouched", func(t *testing.T) {
		mustStatus(t, ts.do(t, http.MethodGet, "/topics/other/eventSubscriptions/c", "", nil), http.StatusOK)
	})
}

func TestNames_CaseInsensitiveUniqueKeepCasing(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "MyTopic", "")
	ts.MustPutTopic(t, "MYTOPIC", eventgrid.CustomEventSchema) // an update, not a second topic
	r := ts.do(t, http.MethodGet, "/topics", "", nil)
	mustStatus(t, r, http.StatusOK)
	list := mustArray(t, r.Body)
	if len(list) != 1 || list[0]["name"] != "MyTopic" || at(list[0], "properties.inputSchema") != "CustomEventSchema" {
		t.Fatalf("topics = %s, want one MyTopic with CustomEventSchema", r.Body)
	}
	if id, _ := list[0]["id"].(string); !strings.HasSuffix(id, "/topics/MyTopic") {
		t.Errorf("id = %q, want the original casing", id)
	}

	first := ts.MustPutSubscription(t, "mytopic", "MySub", webhook(nil))
	second := ts.MustPutSubscription(t, "MYTOPIC", "mysub", webhook(nil))
	for _, got := range []map[string]any{first, second} {
		if got["name"] != "MySub" || at(got, "properties.topic") != "MyTopic" {
			t.Errorf("subscription = %v, want MySub of MyTopic", jsonText(t, got))
		}
	}
	changes := ts.Observer.Changes()
	if len(changes) != 2 || changes[0].Sub.UID != changes[1].Sub.UID || changes[1].Op != mock.OpPut {
		t.Errorf("observer changes = %v, want two puts of one subscription", changes)
	}
	r = ts.do(t, http.MethodGet, "/topics/MyTopic/eventSubscriptions", "", nil)
	if a := mustArray(t, r.Body); len(a) != 1 {
		t.Errorf("subscriptions = %s, want one", r.Body)
	}
}

func TestErrorEnvelope_Shape(t *testing.T) {
	ts := MustOpenServer(t)
	tests := []struct {
		name, method, path, version string
		want                        string
	}{
		{"MissingVersion", http.MethodGet, "/topics", "",
			`{"error":{"code":"BadRequest","details":{"code":"InvalidApiVersion","message":"The api-version query parameter is required; accepted values are 2019-01-01-preview, 2019-01-01."}}}`},
		{"WrongAliasVersion", http.MethodPost, "/topics/t/api/events", edgeVersion,
			`{"error":{"code":"BadRequest","details":{"code":"InvalidApiVersion","message":"api-version \"2019-01-01-preview\" is not supported on this route; accepted values are 2018-01-01."}}}`},
		{"TopicNotFound", http.MethodGet, "/topics/nope", edgeVersion,
			`{"error":{"code":"NotFound","details":{"code":"TopicNotFound","message":"Topic \"nope\" does not exist."}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.doVersion(t, tt.method, tt.path, tt.version, "", nil)
			if got := strings.TrimSpace(string(r.Body)); got != tt.want {
				t.Errorf("body\n got %s\nwant %s", got, tt.want)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" && ct != "application/json; charset=UTF-8" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}
