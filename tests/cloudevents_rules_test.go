package tests_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/edgegrid/edgegrid/pkg/testkit/webhooktest"
)

// ceRuleEvent is a minimal valid CloudEvent with id, plus the members of
// extra (a JSON object's inside, or "").
func ceRuleEvent(id, extra string) string {
	ev := `{"specversion":"1.0","id":"` + id + `","source":"/sensors/7","type":"com.example.reading"`
	if extra != "" {
		ev += "," + extra
	}
	return ev + "}"
}

// TestCloudEventRules_RefusedAtTheDoor: events that break a CloudEvents
// attribute rule are refused with 400 naming the event's index and the
// attribute, whether sent alone, in a batch or in binary mode, and never
// reach the subscriber; their valid counterparts arrive unchanged at the
// CloudEvents Go SDK's receiver.
func TestCloudEventRules_RefusedAtTheDoor(t *testing.T) {
	t.Parallel()
	b := startBroker(t, fastEnv())
	createTopic(t, b.URL, "ce", "CloudEventSchemaV1_0")
	recv := webhooktest.StartReceiver(t)
	createSubscription(t, b.URL, "ce", "sdk", map[string]any{"destination": webhookDest(recv.URL, "contentMode", "Structured")})
	events := b.URL + "/topics/ce/events?" + apiVersion

	for _, c := range []struct {
		name, member, says string
		header             []string // the same attribute in binary mode, if it has a form there
	}{
		{"EmptyDataContentType", `"datacontenttype":""`, `"datacontenttype" must be a media type (RFC 2046)`, []string{"ce-datacontenttype", ""}},
		{"DataContentTypeWithoutSubtype", `"datacontenttype":"xyz"`, `"datacontenttype" must be a media type (RFC 2046) such as "application/json", not "xyz"`,
			[]string{"Content-Type", "xyz"}},
		{"EmptyDataSchema", `"dataschema":""`, `"dataschema" must be an absolute URI`, []string{"ce-dataschema", ""}},
		{"EmptySubject", `"subject":""`, `"subject" must not be empty`, []string{"ce-subject", ""}},
		{"UpperCaseExtension", `"MyExtension":"x"`, `"MyExtension" is not a valid attribute name`, nil},
		{"FractionalExtension", `"reading":21.5`, `"reading" must be an integer from -2147483648 to 2147483647`, nil},
		{"SourceWithSpace", `"source":"my sensor"`, `"source" must be a URI reference`, []string{"ce-source", "my%20sensor"}},
		{"SubjectWithNewline", `"subject":"a\nb"`, `"subject" holds the control character U+000A`, []string{"ce-subject", "a%0Ab"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := strings.Replace(ceRuleEvent("bad-"+c.name, c.member), `"source":"/sensors/7",`, "", strings.Count(c.member, `"source"`))
			mustRefuse(t, http.MethodPost, events, "application/cloudevents+json", bad, []string{"event at index 0: " + c.says})
			mustRefuse(t, http.MethodPost, events, "application/cloudevents-batch+json", "["+ceRuleEvent("ok-"+c.name, "")+","+bad+"]",
				[]string{"event at index 1: " + c.says})
			if c.header != nil {
				header := []string{"ce-specversion", "1.0", "ce-id", "bad-" + c.name, "ce-source", "/sensors/7", "ce-type", "com.example.reading"}
				contentType := "application/json"
				switch c.header[0] {
				case "Content-Type":
					contentType = c.header[1]
				case "ce-datacontenttype":
					contentType = "" // the one or the other, not both
					fallthrough
				default:
					header = append(header, c.header...)
				}
				mustRefuse(t, http.MethodPost, events, contentType, `{"celsius":21.5}`, []string{"event at index 0: " + c.says}, header...)
			}
		})
	}

	valid := []string{
		ceRuleEvent("datacontenttype", `"datacontenttype":"application/json","data":{"celsius":21.5}`),
		ceRuleEvent("text", `"datacontenttype":"text/plain; charset=utf-8","data":"21.5 °C"`),
		ceRuleEvent("dataschema", `"dataschema":"https://example.com/schemas/reading.json","data":{"celsius":21.5}`),
		ceRuleEvent("subject", `"subject":"sensors/7/celsius","time":"2026-03-04T05:06:07.123456789+02:00"`),
		ceRuleEvent("extensions", `"myextension":"x","count":-2147483648,"flag":false,"sampledrate":"10","dataref":"/blobs/7"`),
		ceRuleEvent("nulls", `"subject":null,"dataschema":null,"myextension":null`),
		`{"specversion":"1.0","id":"urn","source":"urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66","type":"t","data_base64":"AAE="}`,
	}
	for _, ev := range valid {
		mustDo(t, http.MethodPost, events, "application/cloudevents+json", ev, http.StatusOK)
	}
	mustDo(t, http.MethodPost, events, "application/cloudevents-batch+json", "["+ceRuleEvent("batch", `"subject":"s"`)+"]", http.StatusOK)
	valid = append(valid, ceRuleEvent("batch", `"subject":"s"`))

	eventually(t, 10*time.Second, func() error {
		if n := len(recv.Received()); n < len(valid) {
			return fmt.Errorf("the receiver has %d events, want %d", n, len(valid))
		}
		return nil
	})
	got := map[string]cloudevents.Event{}
	for _, ev := range recv.Received() {
		got[ev.ID()] = ev
	}
	if len(got) != len(valid) {
		t.Errorf("the receiver got %d events, want %d: refused ones must never arrive", len(got), len(valid))
	}
	for _, published := range valid {
		mustArriveUnchanged(t, published, got)
	}
}

// mustArriveUnchanged fails t unless the event published (structured JSON)
// is among got, by id, with the same attributes and data.
func mustArriveUnchanged(t *testing.T, published string, got map[string]cloudevents.Event) {
	t.Helper()
	var want map[string]any
	d := json.NewDecoder(strings.NewReader(published))
	d.UseNumber() // Integers print as they were written
	if err := d.Decode(&want); err != nil {
		t.Fatal(err)
	}
	ev, ok := got[want["id"].(string)]
	if !ok {
		t.Errorf("event %q did not arrive", want["id"])
		return
	}
	attrs := map[string]any{
		"specversion": ev.SpecVersion(), "id": ev.ID(), "source": ev.Source(), "type": ev.Type(), "subject": ev.Subject(),
		"datacontenttype": ev.DataContentType(), "dataschema": ev.DataSchema(),
	}
	for k, v := range ev.Extensions() {
		attrs[k] = v
	}
	for k, w := range want {
		switch k {
		case "data", "data_base64", "time":
			continue
		}
		if w == nil { // null is absent: the SDK gives "" for an absent core attribute
			if g := attrs[k]; g != nil && g != "" {
				t.Errorf("event %q: %s = %v, want it absent", want["id"], k, g)
			}
		} else if g, ok := attrs[k]; !ok || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("event %q: %s = %v, want %v", want["id"], k, g, w)
		}
		delete(attrs, k)
	}
	for k, g := range attrs {
		if g != "" {
			t.Errorf("event %q: %s = %v was not published", want["id"], k, g)
		}
	}
	if w, ok := want["time"].(string); ok {
		wt, _ := time.Parse(time.RFC3339Nano, w)
		if !ev.Time().Equal(wt) {
			t.Errorf("event %q: time = %v, want %v", want["id"], ev.Time(), wt)
		}
	}
	mustCarrySameData(t, want, ev)
}

// mustCarrySameData compares the published data or data_base64 with what
// the SDK read.
func mustCarrySameData(t *testing.T, want map[string]any, ev cloudevents.Event) {
	t.Helper()
	if b64, ok := want["data_base64"].(string); ok {
		raw, _ := base64.StdEncoding.DecodeString(b64)
		if !bytes.Equal(ev.Data(), raw) {
			t.Errorf("event %q: data %q, want the bytes of %s", want["id"], ev.Data(), b64)
		}
		return
	}
	switch w := want["data"].(type) {
	case nil:
		if len(ev.Data()) != 0 {
			t.Errorf("event %q: data %q, want none", want["id"], ev.Data())
		}
	case string:
		if string(ev.Data()) != w {
			t.Errorf("event %q: data %q, want %q", want["id"], ev.Data(), w)
		}
	default:
		var g any
		d := json.NewDecoder(bytes.NewReader(ev.Data()))
		d.UseNumber()
		if err := d.Decode(&g); err != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("event %q: data %s, want %v", want["id"], ev.Data(), w)
		}
	}
}
