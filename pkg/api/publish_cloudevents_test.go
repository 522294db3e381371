package api_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// ceEvent is a valid structured-mode CloudEvent with the given id.
func ceEvent(id string) map[string]any {
	return map[string]any{"specversion": "1.0", "id": id, "source": "/src", "type": "T", "data": map[string]any{"n": 1}}
}

// ceCanonical is the delivered form of ceEvent(id).
func ceCanonical(id string) string {
	return `{"specversion":"1.0","id":"` + id + `","source":"/src","type":"T","data":{"n":1}}`
}

func TestPublish_CloudEventsStructured(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "ce", eventgrid.CloudEventSchemaV1_0)
	ts.MustPutSubscription(t, "ce", "all", webhook(nil))
	tests := []struct {
		name, path, version, ct string
		body                    any
		want                    []string
	}{
		{"SingleOnBatchRoute", "/topics/ce/events", edgeVersion, ctCloudEvent, ceEvent("1"), []string{ceCanonical("1")}},
		{"SingleCharset", "/topics/ce/events", edgeVersion, ctCloudEvent + "; charset=utf-8", ceEvent("1"), []string{ceCanonical("1")}},
		{"Batch", "/topics/ce/events", edgeVersion, ctCloudEvents, []any{ceEvent("1"), ceEvent("2")}, []string{ceCanonical("1"), ceCanonical("2")}},
		{"BatchCharset", "/topics/ce/events", edgeVersion, ctCloudEvents + ";charset=UTF-8", []any{ceEvent("1")}, []string{ceCanonical("1")}},
		{"ArrayAsJSON", "/topics/ce/events", edgeVersion, ctJSON, []any{ceEvent("1"), ceEvent("2")}, []string{ceCanonical("1"), ceCanonical("2")}},
		{"ObjectAsJSON", "/topics/ce/events", edgeVersion, ctJSON, ceEvent("1"), []string{ceCanonical("1")}},
		{"CloudAliasBatch", "/topics/ce/api/events", cloudVersion, ctCloudEvents, []any{ceEvent("1")}, []string{ceCanonical("1")}},
		{"SingleRoute", "/topics/ce/events/1", edgeVersion, ctCloudEvent, ceEvent("1"), []string{ceCanonical("1")}},
		{"SingleRouteJSON", "/topics/ce/events/1", edgeVersion, ctJSON, ceEvent("1"), []string{ceCanonical("1")}},
		{"SingleRouteIDFromURL", "/topics/ce/events/u1", edgeVersion, ctCloudEvent,
			`{"specversion":"1.0","source":"/src","type":"T","data":{"n":1}}`, []string{ceCanonical("u1")}},
		{"CoreAttributeNamesAnyCase", "/topics/ce/events", edgeVersion, ctCloudEvent,
			`{"SpecVersion":"1.0","Id":"1","Source":"/src","Type":"T","DataSchema":"https://s","Subject":"sub","myext":"x","Data":{"n":1}}`,
			[]string{`{"specversion":"1.0","id":"1","source":"/src","type":"T","subject":"sub","dataschema":"https://s","myext":"x","data":{"n":1}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.Recorder.Reset()
			mustStatus(t, ts.doVersion(t, http.MethodPost, tt.path, tt.version, tt.ct, tt.body), http.StatusOK)
			if got := bodies(ts.Recorder); !slices.Equal(got, tt.want) {
				t.Errorf("delivered\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPublish_CloudEventsBinary(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "ce", eventgrid.CloudEventSchemaV1_0)
	ts.MustPutSubscription(t, "ce", "all", webhook(nil))
	tests := []struct {
		name, path, ct, body string
		headers              map[string]string
		want                 string
	}{
		{"BatchRouteJSON", "/topics/ce/events", ctJSON, `{"a":1}`,
			map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/src", "ce-type": "T", "ce-subject": "s", "ce-time": "2020-01-01T00:00:00Z", "ce-myext": "v"},
			`{"specversion":"1.0","id":"1","source":"/src","type":"T","subject":"s","time":"2020-01-01T00:00:00Z","datacontenttype":"application/json","myext":"v","data":{"a":1}}`},
		{"SingleRouteIDFromURL", "/topics/ce/events/u1", "text/plain; charset=utf-8", `hello`,
			map[string]string{"Ce-Specversion": "1.0", "Ce-Source": "/src", "Ce-Type": "T"},
			`{"specversion":"1.0","id":"u1","source":"/src","type":"T","datacontenttype":"text/plain; charset=utf-8","data":"hello"}`},
		{"OctetStream", "/topics/ce/events", "application/octet-stream", "\x00\x01",
			map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/src", "ce-type": "T"},
			`{"specversion":"1.0","id":"1","source":"/src","type":"T","datacontenttype":"application/octet-stream","data_base64":"AAE="}`},
		{"NoContentType", "/topics/ce/events/1", "", ``,
			map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/src", "ce-type": "T"},
			`{"specversion":"1.0","id":"1","source":"/src","type":"T"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.Recorder.Reset()
			req := brokertest.NewRequest(t, http.MethodPost, ts.url(tt.path, edgeVersion), tt.ct, tt.body)
			for k, v := range tt.headers {
				req.Header[k] = []string{v}
			}
			mustStatus(t, ts.send(t, req), http.StatusOK)
			if got := bodies(ts.Recorder); len(got) != 1 || got[0] != tt.want {
				t.Errorf("delivered\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	t.Run("CloudAlias", func(t *testing.T) {
		ts.Recorder.Reset()
		req := brokertest.NewRequest(t, http.MethodPost, ts.url("/topics/ce/api/events", cloudVersion), ctJSON, `{"a":1}`)
		for k, v := range map[string]string{"ce-specversion": "1.0", "ce-id": "9", "ce-source": "/src", "ce-type": "T"} {
			req.Header.Set(k, v)
		}
		mustStatus(t, ts.send(t, req), http.StatusOK)
		if evs := ts.Recorder.Events(); len(evs) != 1 || evs[0].ID != "9" {
			t.Errorf("events = %v, want one with id 9", bodies(ts.Recorder))
		}
	})
}

func TestPublish_CloudEventsInvalid(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "ce", eventgrid.CloudEventSchemaV1_0)
	ts.MustPutSubscription(t, "ce", "all", webhook(nil))
	tests := []struct {
		name, path, ct, body string
		headers              map[string]string
		code                 string
		parts                []string
	}{
		{"SpecVersion03", "/topics/ce/events", ctCloudEvent, `{"specversion":"0.3","id":"1","source":"/s","type":"T"}`, nil, eventgrid.EInvalidEvent, []string{"index 0", "specversion"}},
		{"MissingSource", "/topics/ce/events", ctCloudEvents, `[{"specversion":"1.0","id":"1","source":"/s","type":"T"},{"specversion":"1.0","id":"2","type":"T"}]`, nil, eventgrid.EInvalidEvent, []string{"index 1", "source"}},
		{"MissingID", "/topics/ce/events", ctCloudEvent, `{"specversion":"1.0","source":"/s","type":"T"}`, nil, eventgrid.EInvalidEvent, []string{"id"}},
		{"IDMismatch", "/topics/ce/events/2", ctCloudEvent, `{"specversion":"1.0","id":"1","source":"/s","type":"T"}`, nil, eventgrid.EInvalidEvent, []string{"id"}},
		{"BatchGetsObject", "/topics/ce/events", ctCloudEvents, `{"specversion":"1.0","id":"1","source":"/s","type":"T"}`, nil, eventgrid.EInvalidJSON, []string{"array"}},
		{"SingleGetsArray", "/topics/ce/events", ctCloudEvent, `[]`, nil, eventgrid.EInvalidJSON, nil},
		{"BinaryMissingType", "/topics/ce/events", ctJSON, `{}`, map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/s"}, eventgrid.EInvalidEvent, []string{"type"}},
		{"BinaryBadJSONBody", "/topics/ce/events", ctJSON, `{`, map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/s", "ce-type": "T"}, eventgrid.EInvalidJSON, nil},
		{"ExtensionNameNotLowerCase", "/topics/ce/events", ctCloudEvent, `{"specversion":"1.0","id":"1","source":"/s","type":"T","MyExt":"x"}`, nil,
			eventgrid.EInvalidEvent, []string{"index 0", `"MyExt" is not a valid attribute name`}},
		{"EmptySubject", "/topics/ce/events", ctCloudEvent, `{"specversion":"1.0","id":"1","source":"/s","type":"T","subject":""}`, nil,
			eventgrid.EInvalidEvent, []string{"index 0", `"subject" must not be empty`}},
		{"BinaryBadContentType", "/topics/ce/events", "xyz", `x`, map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/s", "ce-type": "T"},
			eventgrid.EInvalidEvent, []string{"index 0", `"datacontenttype" must be a media type`}},
		{"BinaryBadTime", "/topics/ce/events", ctJSON, `{}`, map[string]string{"ce-specversion": "1.0", "ce-id": "1", "ce-source": "/s", "ce-type": "T", "ce-time": "yesterday"}, eventgrid.EInvalidEvent, []string{"time"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.Recorder.Reset()
			req := brokertest.NewRequest(t, http.MethodPost, ts.url(tt.path, edgeVersion), tt.ct, tt.body)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			mustErrorContaining(t, ts.send(t, req), http.StatusBadRequest, tt.code, tt.parts...)
			if n := len(ts.Recorder.Calls()); n != 0 {
				t.Errorf("a refused request published %d calls", n)
			}
		})
	}
}
