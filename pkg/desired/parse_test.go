package desired_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/edgegrid/edgegrid/pkg/desired"
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/registry"
)

// validDoc declares two topics and three subscriptions in the twin's
// spelling: arrays as JSON strings, the legacy deliveryPolicy and
// eventTypes, a topic set to null and twin metadata.
const validDoc = `{
  "$version": 4,
  "topics": {
    "orders": {"inputSchema": "eventGridSchema"},
    "Custom": {"inputSchema": "CustomSchema"},
    "gone": null
  },
  "eventSubscriptions": {
    "s-web": {
      "topic": "orders",
      "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://sink.example/web"}},
      "filter": {
        "includedEventTypes": "[\"a\",\"b\"]",
        "advancedFilters": "[{\"operatorType\":\"NumberIn\",\"key\":\"data.n\",\"values\":[1,2]}]"
      },
      "deliveryPolicy": {"approxBatchSizeInBytes": 200000, "maxEventsPerBatch": 25},
      "retryPolicy": {"maxDeliveryAttempts": 3, "eventExpiryInMinutes": 30}
    },
    "s-legacy": {
      "topic": "custom",
      "destination": {"endpointType": "webhook", "properties": {"endpointUrl": "https://sink.example/legacy"}},
      "filter": {"eventTypes": "[\"x\"]"}
    },
    "s-cloud": {
      "topic": "orders",
      "destination": {"endpointType": "EventGrid", "properties": {
        "endpointUrl": "https://t.westus-1.eventgrid.azure.net/api/events?api-version=2018-01-01",
        "sasKey": "SECRET-sas-key-value", "topicName": "cloudtopic"}}
    }
  }
}`

func TestApply_Valid(t *testing.T) {
	reg, res, lines := MustApply(t, validDoc)
	want := desired.Result{
		Topics: []string{"Custom", "orders"},
		Subscriptions: []desired.SubscriptionName{
			{Topic: "orders", Name: "s-cloud"}, {Topic: "Custom", Name: "s-legacy"}, {Topic: "orders", Name: "s-web"},
		},
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("Result = %+v, want %+v", res, want)
	}
	ctx := context.Background()
	tests := []struct {
		name        string
		topic, sub  string
		check       func(*eventgrid.EventSubscription) bool
		description string
	}{
		{"JSON-string arrays", "orders", "s-web", func(s *eventgrid.EventSubscription) bool {
			f := s.Filter
			return f != nil && reflect.DeepEqual(f.IncludedEventTypes, []string{"a", "b"}) &&
				len(f.AdvancedFilters) == 1 && f.AdvancedFilters[0].OperatorType == "NumberIn" && len(f.AdvancedFilters[0].Values) == 2
		}, "filter with types a, b and one NumberIn filter of two values"},
		{"legacy deliveryPolicy", "orders", "s-web", func(s *eventgrid.EventSubscription) bool {
			return s.Destination.MaxEventsPerBatch == 25 && s.Destination.PreferredBatchSizeInKilobytes == 195
		}, "25 events per batch, 195 KB"},
		{"retry policy", "orders", "s-web", func(s *eventgrid.EventSubscription) bool {
			return s.RetryPolicy != nil && *s.RetryPolicy == eventgrid.RetryPolicy{MaxDeliveryAttempts: 3, EventExpiryInMinutes: 30}
		}, "3 attempts, 30 minutes"},
		{"eventTypes and the topic's schema", "Custom", "s-legacy", func(s *eventgrid.EventSubscription) bool {
			return s.Filter != nil && reflect.DeepEqual(s.Filter.IncludedEventTypes, []string{"x"}) &&
				s.EventDeliverySchema == eventgrid.CustomEventSchema
		}, "types x, CustomEventSchema"},
		{"EventGrid destination", "orders", "s-cloud", func(s *eventgrid.EventSubscription) bool {
			return s.Destination.EndpointType == eventgrid.EventGrid && s.Destination.SASKey == "SECRET-sas-key-value" &&
				s.Destination.TopicName == "cloudtopic"
		}, "EventGrid with its key and topic name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := reg.Subscription(ctx, tt.topic, tt.sub)
			if err != nil {
				t.Fatalf("Subscription: %v", err)
			}
			if !tt.check(s) {
				t.Errorf("subscription %+v (filter %+v), want %s", s, s.Filter, tt.description)
			}
		})
	}
	t.Run("topics", func(t *testing.T) {
		ts, _ := reg.Topics(ctx)
		want := []eventgrid.Topic{{Name: "Custom", InputSchema: eventgrid.CustomEventSchema, Owner: desired.Inline}, {Name: "orders", InputSchema: eventgrid.EventGridSchema, Owner: desired.Inline}}
		if !reflect.DeepEqual(ts, want) {
			t.Errorf("topics %+v, want %+v", ts, want)
		}
	})
	t.Run("log", func(t *testing.T) {
		l := withMessage(lines, "declarative configuration applied")
		if len(l) != 1 || len(l[0]["eventSubscriptions"].([]any)) != 3 || l[0]["errors"] != 0.0 {
			t.Errorf("summary lines %v, want one with 3 subscriptions and no error", l)
		}
	})
}

func TestApply_InvalidEntries(t *testing.T) {
	const doc = `{
	  "topics": {
	    "good": {},
	    "bad name": {},
	    "badSchema": {"inputSchema": "Nope"},
	    "Dup": {}, "dup": {}
	  },
	  "eventSubscriptions": {
	    "ok": {"topic": "good", "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://sink.example/ok"}}},
	    "http-hook": {"topic": "good", "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "http://sink.example/x"}}},
	    "unknown-type": {"topic": "good", "destination": {"endpointType": "Carrier", "properties": {}}},
	    "orphan": {"topic": "missing", "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://sink.example/o"}}},
	    "no-topic": {"destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://sink.example/n"}}},
	    "eg-bad": {"topic": "good", "destination": {"endpointType": "EventGrid", "properties": {
	      "endpointUrl": "https://example.com/api/events?api-version=2018-01-01", "sasKey": "SECRET-sas-key-value"}}},
	    "deleted": null,
	    "ok2": {"topic": "GOOD", "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://sink.example/ok2"}}}
	  }
	}`
	reg, res, lines := MustApply(t, doc)
	ctx := context.Background()

	if want := []string{"Dup", "good"}; !reflect.DeepEqual(res.Topics, want) {
		t.Errorf("Topics = %v, want %v", res.Topics, want)
	}
	wantSubs := []desired.SubscriptionName{{Topic: "good", Name: "ok"}, {Topic: "good", Name: "ok2"}}
	if !reflect.DeepEqual(res.Subscriptions, wantSubs) {
		t.Errorf("Subscriptions = %v, want %v", res.Subscriptions, wantSubs)
	}
	for _, s := range wantSubs {
		if _, err := reg.Subscription(ctx, s.Topic, s.Name); err != nil {
			t.Errorf("Subscription %v: %v", s, err)
		}
	}

	tests := []struct {
		name, entry string
		errors      map[string]string
		prefix      string // of the message
	}{
		{"invalid name", "bad name", res.Errors.Topics, "HttpStatusCode='BadRequest' ErrorCode='InvalidName' Message='"},
		{"invalid schema", "badSchema", res.Errors.Topics, "HttpStatusCode='BadRequest' ErrorCode='InvalidSchema' Message='inputSchema \"Nope\" is not valid"},
		{"duplicate", "dup", res.Errors.Topics, "HttpStatusCode='BadRequest' ErrorCode='InvalidName' Message='The topic \"dup\" is declared more than once"},
		{"http webhook under httpsOnly", "http-hook", res.Errors.EventSubscriptions, "HttpStatusCode='BadRequest' ErrorCode='InvalidDestination' Message='destination.properties.endpointUrl must use https"},
		{"unknown endpointType", "unknown-type", res.Errors.EventSubscriptions, "HttpStatusCode='BadRequest' ErrorCode='InvalidDestination' Message='destination.endpointType \"Carrier\" is not valid"},
		{"missing topic", "orphan", res.Errors.EventSubscriptions, "HttpStatusCode='NotFound' ErrorCode='TopicNotFound' Message='Topic \"missing\" does not exist.'"},
		{"no topic", "no-topic", res.Errors.EventSubscriptions, "HttpStatusCode='BadRequest' ErrorCode='TopicNameMismatch' Message='topic is required.'"},
		{"EventGrid host", "eg-bad", res.Errors.EventSubscriptions, "HttpStatusCode='BadRequest' ErrorCode='InvalidDestination' Message='destination.properties.endpointUrl host \"example.com\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, ok := tt.errors[tt.entry]
			if !ok {
				t.Fatalf("no error for %q in %v", tt.entry, tt.errors)
			}
			if !strings.HasPrefix(msg, tt.prefix) || !strings.HasSuffix(msg, "'") {
				t.Errorf("error %q, want prefix %q", msg, tt.prefix)
			}
			logged := false
			for _, l := range lines {
				if (l["topic"] == tt.entry || l["subscription"] == tt.entry) && l["error"] == msg && l["level"] == "warn" {
					logged = true
				}
			}
			if !logged {
				t.Errorf("no warning naming %q with its error in %v", tt.entry, lines)
			}
		})
	}
	if got, want := res.Errors.Len(), len(tests); got != want {
		t.Errorf("%d errors, want %d: %+v", got, want, res.Errors)
	}
	t.Run("secrets are not logged", func(t *testing.T) {
		b, _ := json.Marshal(lines)
		if strings.Contains(string(b), "SECRET") {
			t.Errorf("the log holds a sasKey: %s", b)
		}
	})
}

func TestApply_Shapes(t *testing.T) {
	const topics = `{"t1": {"inputSchema": "CloudEventSchemaV1_0"}, "t2": "{}"}`
	const subs = `{"s1": {"topic": "t1", "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://h/1"}}}}`
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	tests := []struct{ name, doc string }{
		{"plain", `{"topics": ` + topics + `, "eventSubscriptions": ` + subs + `}`},
		{"twin wrapper", `{"properties": {"desired": {"topics": ` + topics + `, "eventSubscriptions": ` + subs + `}, "reported": {}}}`},
		{"maps as JSON strings", `{"topics": ` + quote(topics) + `, "eventSubscriptions": ` + quote(subs) + `}`},
		{"entries as JSON strings", `{"topics": ` + topics + `, "eventSubscriptions": {"s1": ` + quote(`{"topic": "t1", "destination": {"endpointType": "WebHook", "properties": {"endpointUrl": "https://h/1"}}}`) + `}}`},
		{"PascalCase keys", `{"Topics": ` + topics + `, "EventSubscriptions": ` + subs + `}`},
	}
	want := desired.Result{Topics: []string{"t1", "t2"}, Subscriptions: []desired.SubscriptionName{{Topic: "t1", Name: "s1"}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, res, _ := MustApply(t, tt.doc)
			if !reflect.DeepEqual(res, want) {
				t.Errorf("Result = %+v, want %+v", res, want)
			}
			if topic, err := reg.Topic(context.Background(), "t1"); err != nil || topic.InputSchema != eventgrid.CloudEventSchemaV1_0 {
				t.Errorf("topic t1 = %+v, %v", topic, err)
			}
		})
	}
	t.Run("empty maps", func(t *testing.T) {
		for _, doc := range []string{`{}`, `{"topics": null, "eventSubscriptions": {}}`, `{"topics": "null"}`} {
			if _, res, _ := MustApply(t, doc); !reflect.DeepEqual(res, desired.Result{}) {
				t.Errorf("%s: Result = %+v, want none", doc, res)
			}
		}
	})
}

func TestApply_BadDocument(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"empty", "  "},
		{"not JSON", `{"topics": {`},
		{"array", `[]`},
		{"topics not an object", `{"topics": 5}`},
		{"topics an array string", `{"topics": "[1]"}`},
		{"topics string not JSON", `{"topics": "{bad"}`},
		{"subscriptions not an object", `{"eventSubscriptions": ["s"]}`},
		{"desired not an object", `{"properties": {"desired": []}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registry.New(registry.DefaultOptions(), nil)
			res, err := desired.NewReconciler(reg, zerolog.Nop(), desired.Options{}).Apply(context.Background(), desired.Inline, []byte(tt.doc))
			if err == nil {
				t.Errorf("Apply: no error, Result %+v", res)
			}
		})
	}
}

func TestApply_Cancelled(t *testing.T) {
	reg := registry.New(registry.DefaultOptions(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := desired.NewReconciler(reg, zerolog.Nop(), desired.Options{}).Apply(ctx, desired.Inline, []byte(validDoc)); err == nil {
		t.Errorf("Apply with a cancelled context: no error")
	}
	if ts, _ := reg.Topics(context.Background()); len(ts) != 0 {
		t.Errorf("topics created: %v", ts)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "desired.json")
	if err := os.WriteFile(file, []byte(validDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, inline, file string
		want               string
		wantNil, wantErr   bool
	}{
		{name: "neither", wantNil: true},
		{name: "blank inline", inline: "  ", wantNil: true},
		{name: "inline", inline: `{"topics": {}}`, want: `{"topics": {}}`},
		{name: "file", file: file, want: validDoc},
		{name: "both", inline: `{}`, file: file, wantErr: true},
		{name: "missing file", file: filepath.Join(dir, "missing.json"), wantErr: true},
		{name: "empty file", file: empty, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := desired.Load(tt.inline, tt.file)
			switch {
			case tt.wantErr:
				if err == nil {
					t.Errorf("Load: no error, got %q", got)
				}
			case err != nil:
				t.Errorf("Load: %v", err)
			case tt.wantNil && got != nil:
				t.Errorf("Load = %q, want nil", got)
			case !tt.wantNil && string(got) != tt.want:
				t.Errorf("Load = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{eventgrid.Errorf(eventgrid.EInvalidFilter, "bad."), "HttpStatusCode='BadRequest' ErrorCode='InvalidFilter' Message='bad.'"},
		{eventgrid.Errorf(eventgrid.ESubscriptionMissing, "gone."), "HttpStatusCode='NotFound' ErrorCode='SubscriptionNotFound' Message='gone.'"},
		{os.ErrNotExist, "HttpStatusCode='InternalServerError' ErrorCode='InternalServerError' Message='The service encountered an internal error.'"},
		// A refused switch between push and queue: the API's 409, not a
		// BadRequest of its own.
		{eventgrid.Errorf(eventgrid.EEventsHeld, "held."), "HttpStatusCode='Conflict' ErrorCode='SubscriptionHoldsEvents' Message='held.'"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := desired.FormatError(tt.err); got != tt.want {
				t.Errorf("FormatError = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestApply_JSONMistakePosition: a declaration with a JSON mistake is
// refused with the line and column of the mistake, counted in characters,
// also inside a map given as a JSON string.
func TestApply_JSONMistakePosition(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"extra comma", "{\n  \"topics\": {\n    \"a\": {},,\n  }\n}", "line 3, column 13: invalid character ','"},
		{"cut short", "{\"topics\": {\"a\": {}", "line 1, column 19: unexpected end of JSON input"},
		{"after a multibyte name", "{\"topics\": {\"é\": {} \"b\": {}}}", "line 1, column 21: invalid character '\"' after object key:value pair"},
		{"inside a string map", `{"topics": "{\"a\": {]"}`, `topics is a string but not valid JSON (line 1, column 8: invalid character ']'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registry.New(registry.DefaultOptions(), nil)
			_, err := desired.NewReconciler(reg, zerolog.Nop(), desired.Options{}).Apply(context.Background(), desired.Inline, []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
			if err := desired.Check([]byte(tt.doc)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check: %v", err)
			}
		})
	}
}
