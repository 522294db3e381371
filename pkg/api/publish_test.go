package api_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/api"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/internal/mock"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/testkit/brokertest"
)

// bodies returns the Body of every recorded event as a string.
func bodies(r *mock.Recorder) []string {
	var out []string
	for _, ev := range r.Events() {
		out = append(out, string(ev.Body))
	}
	return out
}

// canonical is the delivered form of egEvent(id) published to topic.
func canonical(id, topic string) string {
	return `{"id":"` + id + `","topic":"` + topic + `","subject":"/s","eventType":"T","eventTime":"2020-01-01T00:00:00Z",` +
		`"data":{"n":1},"dataVersion":"1","metadataVersion":"1"}`
}

func TestPublish_EventGridSchema(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "MyTopic", eventgrid.EventGridSchema)
	ts.MustPutSubscription(t, "MyTopic", "all", webhook(nil))
	tests := []struct {
		name, path, version, ct string
		body                    any
		want                    []string
	}{
		{"Batch", "/topics/MyTopic/events", edgeVersion, ctJSON, []any{egEvent("1"), egEvent("2")},
			[]string{canonical("1", "MyTopic"), canonical("2", "MyTopic")}},
		{"BatchOfOne", "/topics/mytopic/events", edgeVersion, ctJSON, []any{egEvent("1")}, []string{canonical("1", "MyTopic")}},
		{"EmptyBatch", "/topics/MyTopic/events", edgeVersion, ctJSON, `[]`, nil},
		{"Single", "/topics/MyTopic/events/1", edgeVersion, ctJSON, egEvent("1"), []string{canonical("1", "MyTopic")}},
		{"SingleIDFromURL", "/topics/MyTopic/events/u-1", edgeVersion, ctJSON,
			`{"subject":"/s","eventType":"T","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1","data":{"n":1}}`,
			[]string{canonical("u-1", "MyTopic")}},
		{"SingleEncodedPercentID", "/topics/MyTopic/events/a%2541", edgeVersion, ctJSON, egEvent("a%41"), []string{canonical("a%41", "MyTopic")}},
		{"SingleEncodedSlashID", "/topics/MyTopic/events/a%2Fb", edgeVersion, ctJSON, egEvent("a/b"), []string{canonical("a/b", "MyTopic")}},
		{"SingleEncodedID", "/topics/MyTopic/events/a%20b", edgeVersion, ctJSON, egEvent("a b"), []string{canonical("a b", "MyTopic")}},
		{"CloudAlias", "/topics/MyTopic/api/events", cloudVersion, ctJSON, []any{egEvent("1")}, []string{canonical("1", "MyTopic")}},
		{"PascalCase", "/topics/MyTopic/events", edgeVersion, "application/json; charset=utf-8",
			`[{"Id":"1","Topic":"MYTOPIC","Subject":"/s","EventType":"T","EventTime":"2020-01-01T00:00:00Z","Data":{"n":1},"DataVersion":"1","MetadataVersion":"1","Extra":true}]`,
			[]string{canonical("1", "MyTopic")}},
		{"CharsetUpperCase", "/topics/MyTopic/events", edgeVersion, "Application/JSON;charset=UTF-8", []any{egEvent("1")}, []string{canonical("1", "MyTopic")}},
		{"Version2019", "/topics/MyTopic/events", "2019-01-01", ctJSON, []any{egEvent("1")}, []string{canonical("1", "MyTopic")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.Recorder.Reset()
			before := time.Now()
			mustStatus(t, ts.doVersion(t, http.MethodPost, tt.path, tt.version, tt.ct, tt.body), http.StatusOK)
			if got := bodies(ts.Recorder); !slices.Equal(got, tt.want) {
				t.Errorf("delivered\n got %q\nwant %q", got, tt.want)
			}
			for _, c := range ts.Recorder.Calls() {
				if c.Topic.Name != "MyTopic" || c.Topic.InputSchema != eventgrid.EventGridSchema {
					t.Errorf("Publish topic = %+v", c.Topic)
				}
				for _, d := range c.Deliveries {
					if d.Event.Accepted.Before(before.Add(-time.Second)) || d.Event.Type != "T" || d.Event.Subject != "/s" {
						t.Errorf("event = %+v", d.Event)
					}
				}
			}
		})
	}
}

func TestPublish_CustomSchema(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "c", eventgrid.CustomEventSchema)
	ts.MustPutSubscription(t, "c", "all", webhook(nil))
	tests := []struct {
		name, path, ct, body string
		want                 []string
	}{
		{"BytesKept", "/topics/c/events", ctJSON, "[ {\"b\":1,  \"a\" : [1, 2.50e0]} ,\n{\"x\":\"\\u00e9\",\"B\":null}\t]",
			[]string{`{"b":1,  "a" : [1, 2.50e0]}`, `{"x":"\u00e9","B":null}`}},
		{"AnyObject", "/topics/c/events", ctJSON, `[{}]`, []string{`{}`}},
		{"Single", "/topics/c/events/ignored", ctJSON, " {\"k\" : \"v\"} ", []string{`{"k" : "v"}`}},
		{"Charset", "/topics/c/events", "application/json; charset=utf-8", `[{"id":7}]`, []string{`{"id":7}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.Recorder.Reset()
			mustStatus(t, ts.do(t, http.MethodPost, tt.path, tt.ct, tt.body), http.StatusOK)
			if got := bodies(ts.Recorder); !slices.Equal(got, tt.want) {
				t.Errorf("delivered\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPublish_Errors(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	ts.MustPutTopic(t, "c", eventgrid.CustomEventSchema)
	ts.MustPutTopic(t, "ce", eventgrid.CloudEventSchemaV1_0)
	for _, topic := range []string{"t", "c", "ce"} {
		ts.MustPutSubscription(t, topic, "all", webhook(nil))
	}
	ok := `{"id":"1","subject":"/s","eventType":"T","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1"}`
	without := func(field string) string {
		m := mustObject(t, []byte(ok))
		delete(m, field)
		return string(brokertest.MustJSON(t, m))
	}
	tests := []struct {
		name, path, ct, body string
		status               int
		code                 string
		parts                []string
	}{
		{"MissingID", "/topics/t/events", ctJSON, `[` + ok + `,` + without("id") + `]`, 400, eventgrid.EInvalidEvent, []string{"index 1", `"id"`}},
		{"MissingSubject", "/topics/t/events", ctJSON, `[` + without("subject") + `]`, 400, eventgrid.EInvalidEvent, []string{"index 0", "subject"}},
		{"MissingEventType", "/topics/t/events", ctJSON, `[` + ok + `,` + ok + `,` + without("eventType") + `]`, 400, eventgrid.EInvalidEvent, []string{"index 2", "eventType"}},
		{"MissingEventTime", "/topics/t/events", ctJSON, `[` + without("eventTime") + `]`, 400, eventgrid.EInvalidEvent, []string{"eventTime"}},
		{"MissingDataVersion", "/topics/t/events", ctJSON, `[` + without("dataVersion") + `]`, 400, eventgrid.EInvalidEvent, []string{"dataVersion"}},
		{"IDNotString", "/topics/t/events", ctJSON, `[{"id":1,"subject":"/s","eventType":"T","eventTime":"x","dataVersion":"1"}]`, 400, eventgrid.EInvalidEvent, []string{"index 0", "id"}},
		{"NameTwice", "/topics/t/events", ctJSON, `[{"ID":"x","id":"1","subject":"/s","eventType":"T","eventTime":"2020-01-01T00:00:00Z","dataVersion":"1"}]`, 400, eventgrid.EInvalidJSON, []string{"index 0", `"id"`, "more than once"}},
		{"MetadataVersion2", "/topics/t/events", ctJSON, `[` + strings.Replace(ok, `"id"`, `"metadataVersion":"2","id"`, 1) + `]`, 400, eventgrid.EInvalidEvent, []string{"metadataVersion"}},
		{"ForeignTopic", "/topics/t/events", ctJSON, `[` + strings.Replace(ok, `"id"`, `"topic":"other","id"`, 1) + `]`, 400, eventgrid.EInvalidEvent, []string{"index 0", "topic", "other"}},
		{"SingleIDMismatch", "/topics/t/events/2", ctJSON, ok, 400, eventgrid.EInvalidEvent, []string{"id", `"2"`}},
		{"SingleGetsArray", "/topics/t/events/1", ctJSON, `[` + ok + `]`, 400, eventgrid.EInvalidJSON, []string{"object"}},
		{"BatchGetsObject", "/topics/t/events", ctJSON, ok, 400, eventgrid.EInvalidJSON, []string{"array"}},
		{"ElementNotObject", "/topics/t/events", ctJSON, `[` + ok + `,5]`, 400, eventgrid.EInvalidJSON, []string{"index 1"}},
		{"Malformed", "/topics/t/events", ctJSON, `[` + ok, 400, eventgrid.EInvalidJSON, nil},
		{"EmptyBody", "/topics/t/events", ctJSON, ``, 400, eventgrid.EInvalidJSON, nil},
		{"CustomElementNotObject", "/topics/c/events", ctJSON, `[{},[]]`, 400, eventgrid.EInvalidJSON, []string{"index 1"}},
		{"CustomNotArray", "/topics/c/events", ctJSON, `{}`, 400, eventgrid.EInvalidJSON, nil},
		{"NoContentType", "/topics/t/events", "", `[` + ok + `]`, 415, eventgrid.EUnsupportedMedia, nil},
		{"TextPlain", "/topics/t/events", "text/plain", `[` + ok + `]`, 415, eventgrid.EUnsupportedMedia, []string{"text/plain"}},
		{"CloudEventMediaOnEventGridTopic", "/topics/t/events", ctCloudEvent, ok, 415, eventgrid.EUnsupportedMedia, []string{"application/json"}},
		{"CloudEventsMediaOnCustomTopic", "/topics/c/events", ctCloudEvents, `[{}]`, 415, eventgrid.EUnsupportedMedia, nil},
		{"Latin1", "/topics/t/events", "application/json; charset=iso-8859-1", `[` + ok + `]`, 415, eventgrid.EUnsupportedMedia, []string{"charset"}},
		{"CloudEventsTextPlain", "/topics/ce/events", "text/plain", `{}`, 415, eventgrid.EUnsupportedMedia, nil},
		{"CloudEventsNoContentType", "/topics/ce/events", "", `{}`, 415, eventgrid.EUnsupportedMedia, nil},
		{"CloudEventsBatchOnSingleRoute", "/topics/ce/events/1", ctCloudEvents, `[]`, 415, eventgrid.EUnsupportedMedia, []string{ctCloudEvent}},
		{"MissingTopicBatch", "/topics/nope/events", ctJSON, `[` + ok + `]`, 404, eventgrid.ETopicNotFound, []string{"nope"}},
		{"MissingTopicSingle", "/topics/nope/events/1", ctJSON, ok, 404, eventgrid.ETopicNotFound, nil},
		{"MissingTopicNoContentType", "/topics/nope/events", "", `x`, 404, eventgrid.ETopicNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.Recorder.Reset()
			mustErrorContaining(t, ts.do(t, http.MethodPost, tt.path, tt.ct, tt.body), tt.status, tt.code, tt.parts...)
			if n := len(ts.Recorder.Calls()); n != 0 {
				t.Errorf("a refused request published %d calls", n)
			}
		})
	}
	t.Run("MissingTopicCloudAlias", func(t *testing.T) {
		r := ts.doVersion(t, http.MethodPost, "/topics/nope/api/events", cloudVersion, ctJSON, `[`+ok+`]`)
		mustError(t, r, http.StatusNotFound, eventgrid.ETopicNotFound)
	})
}

// TestPublish_Routing checks that each event goes to exactly the
// subscriptions whose filters it passes, and that events matching none are
// not handed to the publisher.
func TestPublish_Routing(t *testing.T) {
	ts := MustOpenServer(t)
	ts.MustPutTopic(t, "t", eventgrid.EventGridSchema)
	ts.MustPutTopic(t, "empty", eventgrid.EventGridSchema)
	ts.MustPutSubscription(t, "t", "all", webhook(nil))
	ts.MustPutSubscription(t, "t", "typeA", webhook(map[string]any{"includedEventTypes": []string{"a"}}))
	ts.MustPutSubscription(t, "t", "big", webhook(map[string]any{"advancedFilters": []any{
		map[string]any{"operatorType": "NumberGreaterThan", "key": "Data.N", "value": 10},
	}}))
	ts.MustPutSubscription(t, "t", "photos", webhook(map[string]any{"subjectEndsWith": ".JPG"}))
	ev := func(id, typ, subject string, n int) map[string]any {
		e := egEvent(id)
		e["eventType"], e["subject"], e["data"] = typ, subject, map[string]any{"n": n}
		return e
	}
	routed := func() map[string][]string {
		out := map[string][]string{}
		for _, d := range ts.Recorder.Deliveries() {
			for _, s := range d.Subscriptions {
				out[d.Event.ID] = append(out[d.Event.ID], s.Name)
			}
		}
		return out
	}
	tests := []struct {
		name   string
		events []any
		want   map[string][]string
	}{
		{"Mixed", []any{ev("1", "A", "/x", 1), ev("2", "B", "/x", 11), ev("3", "a", "/p.jpg", 100)},
			map[string][]string{"1": {"all", "typeA"}, "2": {"all", "big"}, "3": {"all", "big", "photos", "typeA"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts.Recorder.Reset()
			mustStatus(t, ts.do(t, http.MethodPost, "/topics/t/events", ctJSON, tt.events), http.StatusOK)
			got := routed()
			for id, want := range tt.want {
				if !slices.Equal(got[id], want) {
					t.Errorf("event %s went to %v, want %v", id, got[id], want)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("routed %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("NoMatchNotPublished", func(t *testing.T) {
		mustStatus(t, ts.do(t, http.MethodDelete, "/topics/t/eventSubscriptions/all", "", nil), http.StatusOK)
		ts.Recorder.Reset()
		r := ts.do(t, http.MethodPost, "/topics/t/events", ctJSON, []any{ev("4", "B", "/x", 1), ev("5", "A", "/x", 1)})
		mustStatus(t, r, http.StatusOK)
		if got, want := routed(), map[string][]string{"5": {"typeA"}}; len(got) != 1 || !slices.Equal(got["5"], want["5"]) {
			t.Errorf("routed %v, want %v", got, want)
		}
		ts.Recorder.Reset()
		mustStatus(t, ts.do(t, http.MethodPost, "/topics/t/events", ctJSON, []any{ev("6", "B", "/x", 1)}), http.StatusOK)
		if n := len(ts.Recorder.Calls()); n != 0 {
			t.Errorf("an unmatched event reached the publisher (%d calls)", n)
		}
	})
	t.Run("TopicWithoutSubscriptions", func(t *testing.T) {
		ts.Recorder.Reset()
		mustStatus(t, ts.do(t, http.MethodPost, "/topics/empty/events", ctJSON, []any{egEvent("1")}), http.StatusOK)
		if n := len(ts.Recorder.Calls()); n != 0 {
			t.Errorf("publisher called %d times for a topic without subscriptions", n)
		}
	})
	t.Run("AllOrNothing", func(t *testing.T) {
		ts.Recorder.Reset()
		bad := ev("8", "A", "/x", 1)
		delete(bad, "eventTime")
		r := ts.do(t, http.MethodPost, "/topics/t/events", ctJSON, []any{ev("7", "A", "/x", 1), bad})
		mustErrorContaining(t, r, http.StatusBadRequest, eventgrid.EInvalidEvent, "index 1", "eventTime")
		if n := len(ts.Recorder.Calls()); n != 0 {
			t.Errorf("a refused batch published %d calls", n)
		}
	})
}

func TestPublish_PublisherFailures(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		retryAfter time.Duration
		status     int
		code       string
		header     string
	}{
		{"QueueFull", mock.QueueFull(), 10 * time.Second, http.StatusServiceUnavailable, eventgrid.EQueueFull, "10"},
		{"QueueFullRoundsUp", mock.QueueFull(), 1500 * time.Millisecond, http.StatusServiceUnavailable, eventgrid.EQueueFull, "2"},
		{"Unavailable", eventgrid.Errorf(eventgrid.EUnavailable, "closing"), time.Second, http.StatusServiceUnavailable, eventgrid.EUnavailable, ""},
		{"Internal", errors.New("disk on fire"), time.Second, http.StatusInternalServerError, eventgrid.EInternal, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := MustOpenServer(t, withAPI(func(o *api.Options) { o.RetryAfter = tt.retryAfter }))
			ts.Recorder.SetError(tt.err)
			ts.MustPutTopic(t, "t", "")
			ts.MustPutSubscription(t, "t", "s", webhook(nil))
			r := ts.do(t, http.MethodPost, "/topics/t/events", ctJSON, []any{egEvent("1")})
			msg := mustError(t, r, tt.status, tt.code)
			if got := r.Header.Get("Retry-After"); got != tt.header {
				t.Errorf("Retry-After = %q, want %q", got, tt.header)
			}
			if strings.Contains(msg, "fire") {
				t.Errorf("message %q reveals an internal error", msg)
			}
			if ts.Recorder.Refused() != 1 {
				t.Errorf("publisher refused %d calls, want 1", ts.Recorder.Refused())
			}
		})
	}
}

// TestPublish_FakePublisher checks the API against the function-field fake
// of its publish path, without a registry or a subscription behind it: the
// request context and the decoded events reach the publisher, and its
// count of unmatched events reaches the metrics.
func TestPublish_FakePublisher(t *testing.T) {
	reg := registry.New(registry.DefaultOptions(), nil)
	calls := make(chan context.Context, 1)
	pub := &mock.EventPublisher{
		TopicFn: func(name string) (eventgrid.Topic, eventgrid.Subscribers, error) {
			return eventgrid.Topic{Name: name, InputSchema: eventgrid.EventGridSchema}, eventgrid.Subscribers{Any: true}, nil
		},
		PublishFn: func(ctx context.Context, topic eventgrid.Topic, events []*eventgrid.Event) (int, error) {
			if topic.Name != "t" || len(events) != 1 || events[0].ID != "1" {
				t.Errorf("published %s %v; want event 1 to t", topic.Name, events)
			}
			calls <- ctx
			return 0, nil
		},
	}
	base := openWith(t, reg, pub)
	client := &http.Client{Timeout: 5 * time.Second}
	st, _, b := brokertest.Do(t, client, http.MethodPost, base+"/topics/t/events?api-version="+edgeVersion, ctJSON, []any{egEvent("1")})
	if st != http.StatusOK {
		t.Fatalf("publish: %d %s", st, b)
	}
	select {
	case ctx := <-calls:
		if ctx == nil {
			t.Error("publisher got a nil context")
		}
	default:
		t.Error("publisher not called")
	}
}

// TestPublish_BuiltAsCloudEvents: for a topic whose subscriptions all take
// CloudEvents the events reach the publisher built as their CloudEvents,
// once: should the subscriptions change meanwhile, the publisher restores
// them (registry.Router), and the request is never read again.
func TestPublish_BuiltAsCloudEvents(t *testing.T) {
	reg := registry.New(registry.DefaultOptions(), nil)
	var mu sync.Mutex
	var got []*eventgrid.Event // the first event of each call, copied
	pub := &mock.EventPublisher{
		TopicFn: func(name string) (eventgrid.Topic, eventgrid.Subscribers, error) {
			return eventgrid.Topic{Name: name, InputSchema: eventgrid.EventGridSchema}, eventgrid.Subscribers{Any: true, CloudEventsOnly: true}, nil
		},
		PublishFn: func(_ context.Context, _ eventgrid.Topic, events []*eventgrid.Event) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			ev := *events[0]
			got = append(got, &ev)
			return 0, nil
		},
	}
	base := openWith(t, reg, pub)
	client := &http.Client{Timeout: 5 * time.Second}
	st, _, b := brokertest.Do(t, client, http.MethodPost, base+"/topics/t/events?api-version="+edgeVersion, ctJSON, []any{egEvent("1")})
	if st != http.StatusOK {
		t.Fatalf("publish: %d %s", st, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !got[0].Converted || got[0].ID != "1" || got[0].Type != "T" || got[0].Subject != "/s" || got[0].DataVersion != "1" ||
		!strings.HasPrefix(string(got[0].Body), `{"specversion":"1.0","id":"1","source":"t"`) {
		t.Fatalf("calls: %d, %+v; want the CloudEvent taken", len(got), got)
	}
}

// openWith serves the API over reg and pub on a loopback port, until the
// test ends, and returns its base URL.
func openWith(t *testing.T, reg *registry.Registry, pub api.Publisher) string {
	t.Helper()
	srv := api.New(api.DefaultOptions(), api.Services{Resources: reg, Publisher: pub}, zerolog.Nop())
	addr, err := srv.Open("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return "http://" + addr.String()
}
