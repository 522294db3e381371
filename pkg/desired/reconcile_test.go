package desired_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
	"github.com/edgegrid/edgegrid/pkg/testkit/logbuf"
)

// recorder is a subscription observer that keeps every change, as the
// delivery engine sees them: a put with a known UID updates that
// subscription's queue in place, a delete discards it.
type recorder struct {
	mu      sync.Mutex
	changes []string
}

func (r *recorder) SubscriptionPut(s *eventgrid.EventSubscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, fmt.Sprintf("put %s/%s uid %d", s.Topic, s.Name, s.UID))
}

func (r *recorder) SubscriptionDeleted(s *eventgrid.EventSubscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, fmt.Sprintf("delete %s/%s uid %d", s.Topic, s.Name, s.UID))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.changes
	r.changes = nil
	return c
}

// fixture is a reconciler over a registry whose changes are recorded.
type fixture struct {
	reg *registry.Registry
	rec *recorder
	r   *desired.Reconciler
	log *logbuf.Buffer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{rec: &recorder{}, log: &logbuf.Buffer{}}
	f.reg = registry.New(registry.DefaultOptions(), f.rec)
	f.r = desired.NewReconciler(f.reg, zerolog.New(f.log).Level(zerolog.DebugLevel), desired.Options{})
	return f
}

// apply applies doc from source and returns the result and the log lines
// it wrote.
func (f *fixture) apply(t *testing.T, source eventgrid.Owner, doc string) (desired.Result, []map[string]any) {
	t.Helper()
	f.log.Reset()
	res, err := f.r.Apply(context.Background(), source, []byte(doc))
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return res, f.log.Lines(t)
}

// fileSource is a desired_config_file, as an owner.
var fileSource = desired.File("/etc/edgegrid/desired.json")

func hook(topic, url string, extra ...string) string {
	return `{"topic": "` + topic + `", "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "` + url + `"}}` +
		strings.Join(extra, "") + `}`
}

func doc(topics map[string]string, subs map[string]string) string {
	var b strings.Builder
	b.WriteString(`{"topics": {`)
	i := 0
	for k, v := range topics {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q: %s", k, v)
		i++
	}
	b.WriteString(`}, "eventSubscriptions": {`)
	i = 0
	for k, v := range subs {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q: %s", k, v)
		i++
	}
	b.WriteString("}}")
	return b.String()
}

func TestReconciler_AddUpdateDelete(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	first := doc(map[string]string{"orders": `{}`, "old": `{}`},
		map[string]string{"keep": hook("orders", "https://sink.example/keep"), "drop": hook("orders", "https://sink.example/drop"),
			"in-old": hook("old", "https://sink.example/old")})
	res, _ := f.apply(t, fileSource, first)
	if len(res.Topics) != 2 || len(res.Subscriptions) != 3 || res.Errors.Len() != 0 {
		t.Fatalf("first apply: %+v", res)
	}
	uid := func(topic, name string) uint64 {
		s, err := f.reg.Subscription(ctx, topic, name)
		if err != nil {
			t.Fatal(err)
		}
		return s.UID
	}
	keep, drop, inOld := uid("orders", "keep"), uid("orders", "drop"), uid("old", "in-old")
	f.rec.take()

	// keep changes (a filter), drop and the topic old go, add comes.
	second := doc(map[string]string{"orders": `{}`},
		map[string]string{"keep": hook("orders", "https://sink.example/keep", `, "filter": {"includedEventTypes": ["a"]}`),
			"add": hook("orders", "https://sink.example/add")})
	res, lines := f.apply(t, fileSource, second)
	want := desired.Result{
		DeletedTopics:        []string{"old"},
		Subscriptions:        []desired.SubscriptionName{{Topic: "orders", Name: "add"}, {Topic: "orders", Name: "keep"}},
		DeletedSubscriptions: []desired.SubscriptionName{{Topic: "old", Name: "in-old"}, {Topic: "orders", Name: "drop"}},
		Unchanged:            1,
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("second apply = %+v, want %+v", res, want)
	}
	got := f.rec.take()
	// Deletions first, then the puts (which run side by side: any order).
	if len(got) == 4 {
		slices.Sort(got[2:])
	}
	wantChanges := []string{
		fmt.Sprintf("delete old/in-old uid %d", inOld), fmt.Sprintf("delete orders/drop uid %d", drop),
		"put orders/add uid 4", fmt.Sprintf("put orders/keep uid %d", keep),
	}
	if !reflect.DeepEqual(got, wantChanges) {
		t.Errorf("changes %q, want %q (keep updated in place: same UID, never deleted)", got, wantChanges)
	}
	if s, _ := f.reg.Subscription(ctx, "orders", "keep"); s == nil || s.Filter == nil || !reflect.DeepEqual(s.Filter.IncludedEventTypes, []string{"a"}) {
		t.Errorf("keep after update: %+v", s)
	}
	if _, err := f.reg.Topic(ctx, "old"); eventgrid.ErrorCode(err) != eventgrid.ETopicNotFound {
		t.Errorf("topic old after its removal: %v", err)
	}
	if l := withMessage(lines, "declarative configuration applied"); len(l) != 1 || l[0]["source"] != "desired_config_file" {
		t.Errorf("summary lines %v", l)
	}

	t.Run("moved to another topic", func(t *testing.T) {
		f.apply(t, fileSource, doc(map[string]string{"orders": `{}`, "other": `{}`},
			map[string]string{"keep": hook("other", "https://sink.example/keep"), "add": hook("orders", "https://sink.example/add")}))
		got := f.rec.take()
		if len(got) != 2 || !strings.HasPrefix(got[0], "put other/keep") || !strings.HasPrefix(got[1], "delete orders/keep") {
			t.Errorf("changes %q, want other/keep created, then orders/keep deleted", got)
		}
	})
	t.Run("null entries are not declared", func(t *testing.T) {
		res, _ := f.apply(t, fileSource, `{"topics": {"orders": {}, "other": null}, "eventSubscriptions": {"add": `+hook("orders", "https://sink.example/add")+`, "keep": null}}`)
		if !reflect.DeepEqual(res.DeletedTopics, []string{"other"}) || len(res.DeletedSubscriptions) != 1 || res.DeletedSubscriptions[0].Name != "keep" {
			t.Errorf("Result %+v, want other and keep deleted", res)
		}
	})
}

func TestReconciler_Idempotent(t *testing.T) {
	f := newFixture(t)
	f.apply(t, fileSource, validDoc)
	f.rec.take()
	// The same content, reformatted.
	var v any
	_ = json.Unmarshal([]byte(validDoc), &v)
	again, _ := json.MarshalIndent(v, "", "    ")
	for i, d := range []string{validDoc, string(again)} {
		res, lines := f.apply(t, fileSource, d)
		if res.Changed() || res.Unchanged != 5 || res.Errors.Len() != 0 {
			t.Errorf("apply %d: %+v, want 5 unchanged and nothing else", i, res)
		}
		if got := f.rec.take(); len(got) != 0 {
			t.Errorf("apply %d changed subscriptions: %q", i, got)
		}
		if len(lines) != 1 || lines[0]["level"] != "debug" || lines[0]["message"] != "declarative configuration unchanged" {
			t.Errorf("apply %d logged %v, want one debug line", i, lines)
		}
	}
}

func TestReconciler_APICreatedUntouched(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// Created through the API (the same services).
	if _, _, err := f.reg.PutTopic(ctx, eventgrid.Topic{Name: "api-topic"}); err != nil {
		t.Fatal(err)
	}
	apiSub := eventgrid.EventSubscription{Topic: "api-topic", Name: "api-sub", Destination: eventgrid.Destination{EndpointType: eventgrid.WebHook, EndpointURL: "https://sink.example/api"}}
	if _, _, err := f.reg.PutSubscription(ctx, apiSub); err != nil {
		t.Fatal(err)
	}
	f.rec.take()

	// Declared: the same names, and a subscription of its own on the API's topic.
	d := doc(map[string]string{"api-topic": `{"inputSchema": "CloudEventSchemaV1_0"}`, "mine": `{}`},
		map[string]string{"api-sub": hook("api-topic", "https://sink.example/declared"), "declared-sub": hook("api-topic", "https://sink.example/d")})
	res, lines := f.apply(t, fileSource, d)
	if !strings.Contains(res.Errors.Topics["api-topic"], "created over the REST API") ||
		!strings.Contains(res.Errors.EventSubscriptions["api-sub"], "created over the REST API") {
		t.Errorf("errors %+v, want api-topic and api-sub refused", res.Errors)
	}
	if len(withMessage(lines, "declared topic skipped")) != 1 || len(withMessage(lines, "declared event subscription skipped")) != 1 {
		t.Errorf("log %v, want a warning for each refused entry", lines)
	}
	if s, _ := f.reg.Subscription(ctx, "api-topic", "api-sub"); s.Destination.EndpointURL != "https://sink.example/api" {
		t.Errorf("api-sub changed: %+v", s.Destination)
	}
	if tp, _ := f.reg.Topic(ctx, "api-topic"); tp.InputSchema != eventgrid.EventGridSchema {
		t.Errorf("api-topic changed: %+v", tp)
	}

	// Everything removed from the source: only what it declared goes; the
	// API's topic and subscription stay.
	f.rec.take()
	res, _ = f.apply(t, fileSource, `{}`)
	if !reflect.DeepEqual(res.DeletedTopics, []string{"mine"}) ||
		!reflect.DeepEqual(res.DeletedSubscriptions, []desired.SubscriptionName{{Topic: "api-topic", Name: "declared-sub"}}) {
		t.Errorf("Result %+v, want mine and declared-sub deleted only", res)
	}
	if _, err := f.reg.Subscription(ctx, "api-topic", "api-sub"); err != nil {
		t.Errorf("api-sub: %v", err)
	}

	t.Run("declared topic holding an API subscription is kept", func(t *testing.T) {
		f.apply(t, fileSource, doc(map[string]string{"shared": `{}`}, nil))
		if _, _, err := f.reg.PutSubscription(ctx, eventgrid.EventSubscription{Topic: "shared", Name: "by-api", Destination: apiSub.Destination}); err != nil {
			t.Fatal(err)
		}
		res, lines := f.apply(t, fileSource, `{}`)
		if len(res.DeletedTopics) != 0 {
			t.Errorf("Result %+v, want shared kept", res)
		}
		if _, err := f.reg.Subscription(ctx, "shared", "by-api"); err != nil {
			t.Errorf("by-api: %v", err)
		}
		if len(withMessage(lines, "topic no longer declared but kept, with the event subscriptions that other sources or the REST API made on it; the REST API manages it now")) != 1 {
			t.Errorf("log %v, want a warning", lines)
		}
	})
}

func TestReconciler_BadEntrySkipped(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	good := hook("t", "https://sink.example/a")
	f.apply(t, desired.Twin, doc(map[string]string{"t": `{}`}, map[string]string{"a": good, "b": hook("t", "https://sink.example/b")}))
	f.rec.take()
	// a turns bad (plain http under httpsOnly), c is new and bad, d new and good.
	res, lines := f.apply(t, desired.Twin, doc(map[string]string{"t": `{}`, "bad name": `{}`}, map[string]string{
		"a": hook("t", "http://sink.example/a"), "b": hook("t", "https://sink.example/b"),
		"c": hook("t", "https://sink.example/c", `, "retryPolicy": {"maxDeliveryAttempts": 0}`), "d": hook("t", "https://sink.example/d"),
	}))
	if got := []string{res.Errors.Topics["bad name"][:30], res.Errors.EventSubscriptions["a"][:30], res.Errors.EventSubscriptions["c"][:30]}; res.Errors.Len() != 3 ||
		!reflect.DeepEqual(got, []string{"HttpStatusCode='BadRequest' Er", "HttpStatusCode='BadRequest' Er", "HttpStatusCode='BadRequest' Er"}) {
		t.Errorf("errors %+v, want bad name, a and c", res.Errors)
	}
	if !reflect.DeepEqual(res.Subscriptions, []desired.SubscriptionName{{Topic: "t", Name: "d"}}) || res.Unchanged != 2 {
		t.Errorf("Result %+v, want d created, t and b unchanged", res)
	}
	if s, err := f.reg.Subscription(ctx, "t", "a"); err != nil || s.Destination.EndpointURL != "https://sink.example/a" {
		t.Errorf("a = %+v, %v: want its last good declaration kept", s, err)
	}
	if n := len(withMessage(lines, "declared event subscription skipped")) + len(withMessage(lines, "declared topic skipped")); n != 3 {
		t.Errorf("%d warnings, want 3: %v", n, lines)
	}
	// The same content again warns no more.
	_, lines = f.apply(t, desired.Twin, doc(map[string]string{"t": `{}`, "bad name": `{}`}, map[string]string{
		"a": hook("t", "http://sink.example/a"), "b": hook("t", "https://sink.example/b"),
		"c": hook("t", "https://sink.example/c", `, "retryPolicy": {"maxDeliveryAttempts": 0}`), "d": hook("t", "https://sink.example/d"),
	}))
	if len(lines) != 1 || lines[0]["level"] != "debug" {
		t.Errorf("re-apply logged %v, want one debug line", lines)
	}
	t.Run("reported", func(t *testing.T) {
		rep := f.r.Reported(desired.Twin, res, nil)
		b, _ := json.Marshal(rep)
		for _, s := range []string{`"t":{"inputSchema":"EventGridSchema"}`, `"d":{"endpointType":"WebHook","topic":"t"}`, `"bad name":"HttpStatusCode='BadRequest'`} {
			if !strings.Contains(string(b), s) {
				t.Errorf("reported %s lacks %s", b, s)
			}
		}
		if strings.Contains(string(b), "sink.example") {
			t.Errorf("reported %s holds endpoint URLs", b)
		}
	})
}

func TestReconciler_Sources(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.r.Expect(fileSource, desired.Twin)
	if f.r.Ready() {
		t.Fatal("ready before any apply")
	}
	f.apply(t, fileSource, doc(map[string]string{"t": `{}`}, map[string]string{"s": hook("t", "https://sink.example/s")}))
	if f.r.Ready() {
		t.Fatal("ready before the twin's first apply")
	}
	// The twin declares the same names: refused, the file keeps them.
	res, _ := f.apply(t, desired.Twin, doc(map[string]string{"t": `{}`, "t2": `{}`}, map[string]string{"s": hook("t", "https://sink.example/other")}))
	if !strings.Contains(res.Errors.Topics["t"], "declared in desired_config_file /etc/edgegrid/desired.json already") ||
		!strings.Contains(res.Errors.EventSubscriptions["s"], "declared in desired_config_file /etc/edgegrid/desired.json already") {
		t.Errorf("errors %+v", res.Errors)
	}
	if !f.r.Ready() {
		t.Error("not ready after both sources applied")
	}
	// The twin emptied: its t2 goes, the file's t and s stay.
	res, _ = f.apply(t, desired.Twin, `{}`)
	if !reflect.DeepEqual(res.DeletedTopics, []string{"t2"}) || len(res.DeletedSubscriptions) != 0 {
		t.Errorf("Result %+v", res)
	}
	if _, err := f.reg.Subscription(ctx, "t", "s"); err != nil {
		t.Errorf("s: %v", err)
	}
	t.Run("ready without sources", func(t *testing.T) {
		if !desired.NewReconciler(f.reg, zerolog.Nop(), desired.Options{}).Ready() {
			t.Error("a reconciler expecting nothing is not ready")
		}
	})
	t.Run("a bad document counts as the first apply", func(t *testing.T) {
		r := desired.NewReconciler(f.reg, zerolog.Nop(), desired.Options{})
		r.Expect(desired.Twin)
		if _, err := r.Apply(ctx, desired.Twin, []byte(`{"topics": 5}`)); err == nil {
			t.Error("no error")
		}
		if !r.Ready() {
			t.Error("not ready")
		}
	})
}
