package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

func TestPutTopic_Shapes(t *testing.T) {
	tests := []struct {
		name   string
		ct     string
		body   any
		schema string
	}{
		{"NoBody", "", nil, "EventGridSchema"},
		{"EmptyObject", ctJSON, `{}`, "EventGridSchema"},
		{"NullProperties", ctJSON, `{"properties":null}`, "EventGridSchema"},
		{"CamelCase", ctJSON, `{"name":"t","properties":{"inputSchema":"CloudEventSchemaV1_0"}}`, "CloudEventSchemaV1_0"},
		{"PascalCase", "application/json; charset=utf-8", `{"Name":"t","Properties":{"InputSchema":"CustomEventSchema"}}`, "CustomEventSchema"},
		{"CustomSchemaAlias", ctJSON, `{"properties":{"inputSchema":"CustomSchema"}}`, "CustomEventSchema"},
		{"LowerCaseValue", ctJSON, `{"properties":{"inputSchema":"customeventschema"}}`, "CustomEventSchema"},
		{"MixedCaseValue", ctJSON, `{"properties":{"inputSchema":"eventGridSchema"}}`, "EventGridSchema"},
		{"NameOtherCase", ctJSON, `{"name":"T"}`, "EventGridSchema"},
		{"TextJSON", "text/json", `{}`, "EventGridSchema"},
		{"ReadOnlyMembersIgnored", ctJSON, `{"id":"/x","type":"x","location":null,"properties":{"endpoint":"ignored","provisioningState":"Succeeded"}}`, "EventGridSchema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := MustOpenServer(t)
			r := ts.do(t, http.MethodPut, "/topics/t", tt.ct, tt.body)
			mustStatus(t, r, http.StatusOK)
			got := mustObject(t, r.Body)
			want := map[string]any{
				"id":   api.DefaultOptions().IDPrefix + "/topics/t",
				"name": "t",
				"type": "Microsoft.EventGrid/topics",
				"properties": map[string]any{
					"endpoint":    endpointBase(ts) + "/topics/t/events?api-version=2019-01-01-preview",
					"inputSchema": tt.schema,
				},
			}
			if g, w := jsonText(t, got), jsonText(t, want); g != w {
				t.Errorf("response\n got %s\nwant %s", g, w)
			}
			r = ts.do(t, http.MethodGet, "/topics/t", "", nil)
			mustStatus(t, r, http.StatusOK)
			if g, w := jsonText(t, mustObject(t, r.Body)), jsonText(t, want); g != w {
				t.Errorf("GET\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestPutTopic_CreateOrUpdate(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", eventgrid.CustomEventSchema)
	ts.MustPutTopic(t, "t", eventgrid.CloudEventSchemaV1_0) // no subscriptions yet: allowed
	got, err := ts.Registry.Topic(t.Context(), "t")
	if err != nil || got.InputSchema != eventgrid.CloudEventSchemaV1_0 {
		t.Fatalf("Topic = %+v, %v; want CloudEventSchemaV1_0", got, err)
	}
	ts.MustPutSubscription(t, "t", "s", webhook(nil))

	t.Run("SameSchemaWithSubscriptions", func(t *testing.T) {
		ts.MustPutTopic(t, "T", eventgrid.CloudEventSchemaV1_0)
	})
	t.Run("ChangeSchemaWithSubscriptions", func(t *testing.T) {
		r := ts.do(t, http.MethodPut, "/topics/t", ctJSON, `{"properties":{"inputSchema":"EventGridSchema"}}`)
		mustErrorContaining(t, r, http.StatusBadRequest, eventgrid.EInvalidSchema, "subscription")
	})
	t.Run("DefaultSchemaIsAChange", func(t *testing.T) {
		r := ts.do(t, http.MethodPut, "/topics/t", ctJSON, `{}`)
		mustError(t, r, http.StatusBadRequest, eventgrid.EInvalidSchema)
	})
	t.Run("AfterDeletingSubscriptions", func(t *testing.T) {
		mustStatus(t, ts.do(t, http.MethodDelete, "/topics/t/eventSubscriptions/s", "", nil), http.StatusOK)
		ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	})
}

func TestPutTopic_Errors(t *testing.T) {
	tests := []struct {
		name   string
		ct     string
		body   any
		status int
		code   string
		parts  []string
	}{
		{"MalformedJSON", ctJSON, `{"properties":`, http.StatusBadRequest, eventgrid.EInvalidJSON, nil},
		{"TrailingGarbage", ctJSON, `{} x`, http.StatusBadRequest, eventgrid.EInvalidJSON, nil},
		{"BodyIsArray", ctJSON, `[]`, http.StatusBadRequest, eventgrid.EInvalidJSON, []string{"object"}},
		{"BodyIsString", ctJSON, `"t"`, http.StatusBadRequest, eventgrid.EInvalidJSON, nil},
		{"NameMismatch", ctJSON, `{"name":"other"}`, http.StatusBadRequest, eventgrid.EInvalidName, []string{"other"}},
		{"NameNotString", ctJSON, `{"name":5}`, http.StatusBadRequest, eventgrid.EInvalidName, []string{"name"}},
		{"PropertiesNotObject", ctJSON, `{"properties":[1]}`, http.StatusBadRequest, eventgrid.EBadRequest, []string{"properties"}},
		{"UnknownSchema", ctJSON, `{"properties":{"inputSchema":"Avro"}}`, http.StatusBadRequest, eventgrid.EInvalidSchema, []string{"Avro", "inputSchema"}},
		{"SchemaNotString", ctJSON, `{"properties":{"inputSchema":1}}`, http.StatusBadRequest, eventgrid.EInvalidSchema, []string{"inputSchema"}},
		{"PlainText", "text/plain", `{}`, http.StatusUnsupportedMediaType, eventgrid.EUnsupportedMedia, []string{"text/plain"}},
		{"XML", "application/xml", `<t/>`, http.StatusUnsupportedMediaType, eventgrid.EUnsupportedMedia, nil},
		{"Latin1", "application/json; charset=iso-8859-1", `{}`, http.StatusUnsupportedMediaType, eventgrid.EUnsupportedMedia, []string{"charset"}},
		{"BadMediaType", "application/", `{}`, http.StatusUnsupportedMediaType, eventgrid.EUnsupportedMedia, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := MustOpenServer(t)
			r := ts.do(t, http.MethodPut, "/topics/t", tt.ct, tt.body)
			mustErrorContaining(t, r, tt.status, tt.code, tt.parts...)
			if ts, _ := ts.Registry.Topics(t.Context()); len(ts) != 0 {
				t.Errorf("topics = %v after a refused PUT", ts)
			}
		})
	}
}

func TestNames_Limits(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", "")
	long := strings.Repeat("a", 128)
	tests := []struct {
		name  string
		path  string // URL path segment, as sent
		valid bool
	}{
		{"Max", long, true},
		{"OverMax", long + "b", false},
		{"AllClasses", "Az09-_", true},
		{"One", "x", true},
		{"Dot", "a.b", false},
		{"EncodedSlash", "a%2Fb", false},
		{"Space", "a%20b", false},
		{"Unicode", "caf%C3%A9", false},
		{"Colon", "a:b", false},
		{"Tilde", "a~b", false},
		{"Plus", "a+b", false},
		{"EncodedLetters", "%61%62", true},
		{"EncodedPercent", "a%2541", false}, // the name is "a%41": decoded once, not twice
	}
	for _, tt := range tests {
		t.Run("Topic/"+tt.name, func(t *testing.T) {
			r := ts.do(t, http.MethodPut, "/topics/"+tt.path, "", nil)
			if tt.valid {
				mustStatus(t, r, http.StatusOK)
				return
			}
			mustError(t, r, http.StatusBadRequest, eventgrid.EInvalidName)
		})
		t.Run("Subscription/"+tt.name, func(t *testing.T) {
			r := ts.do(t, http.MethodPut, "/topics/t/eventSubscriptions/"+tt.path, ctJSON, webhook(nil))
			if tt.valid {
				mustStatus(t, r, http.StatusOK)
				return
			}
			mustError(t, r, http.StatusBadRequest, eventgrid.EInvalidName)
		})
	}
	t.Run("SubscriptionPathWithSlash", func(t *testing.T) {
		r := ts.do(t, http.MethodPut, "/topics/t/eventSubscriptions/a/b", ctJSON, webhook(nil))
		mustError(t, r, http.StatusBadRequest, eventgrid.EInvalidName)
	})
	t.Run("EmptyTopicSegment", func(t *testing.T) {
		// "/topics/" is the collection, which cannot be PUT.
		mustError(t, ts.do(t, http.MethodPut, "/topics/", "", nil), http.StatusMethodNotAllowed, eventgrid.EMethodNotAllowed)
	})
	t.Run("EmptyNameInBody", func(t *testing.T) {
		r := ts.do(t, http.MethodPut, "/topics/t", ctJSON, `{"name":""}`)
		mustError(t, r, http.StatusBadRequest, eventgrid.EInvalidName)
	})
	t.Run("EncodedNameStoredDecoded", func(t *testing.T) {
		if _, err := ts.Registry.Topic(t.Context(), "ab"); err != nil {
			t.Errorf("topic %%61%%62 not stored as ab: %v", err)
		}
	})
}

func TestPutTopic_MaxTopics(t *testing.T) {
	ts := MustOpenServer(t, withRegistry(func(o *registry.Options) { o.MaxTopics = 2 }))
	ts.MustPutTopic(t, "a", "")
	ts.MustPutTopic(t, "b", "")
	mustErrorContaining(t, ts.do(t, http.MethodPut, "/topics/c", "", nil), http.StatusBadRequest, eventgrid.ELimitExceeded, "2")
	ts.MustPutTopic(t, "A", "") // updates still work at the limit
	mustStatus(t, ts.do(t, http.MethodDelete, "/topics/a", "", nil), http.StatusOK)
	ts.MustPutTopic(t, "c", "")
}

func TestTopics_Missing(t *testing.T) {
	ts := MustOpenServer(t)
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		t.Run(m, func(t *testing.T) {
			mustErrorContaining(t, ts.do(t, m, "/topics/nope", "", nil), http.StatusNotFound, eventgrid.ETopicNotFound, "nope")
		})
	}
	t.Run("EmptyList", func(t *testing.T) {
		r := ts.do(t, http.MethodGet, "/topics", "", nil)
		mustStatus(t, r, http.StatusOK)
		if strings.TrimSpace(string(r.Body)) != "[]" {
			t.Errorf("list = %s, want []", r.Body)
		}
	})
}

func TestListTopics_OrderAndEndpoint(t *testing.T) {
	ts := MustOpenServer(t)
	for _, n := range []string{"c", "A", "b"} {
		ts.MustPutTopic(t, n, "")
	}
	r := ts.do(t, http.MethodGet, "/topics", "", nil)
	mustStatus(t, r, http.StatusOK)
	var names []string
	for _, tp := range mustArray(t, r.Body) {
		names = append(names, tp["name"].(string))
		if want := endpointBase(ts) + "/topics/" + tp["name"].(string) + "/events?api-version=2019-01-01-preview"; at(tp, "properties.endpoint") != want {
			t.Errorf("endpoint = %v, want %s", at(tp, "properties.endpoint"), want)
		}
	}
	if strings.Join(names, ",") != "A,b,c" {
		t.Errorf("names = %v, want A,b,c", names)
	}
}
