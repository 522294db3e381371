package api

import (
	"strings"
	"testing"
	"time"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
)

// TestDecodeRedrive: :redrive takes nothing, {}, ids or givenUpSince;
// every other body is 400 naming what is wrong.
func TestDecodeRedrive(t *testing.T) {
	since := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name, body string
		ids        []string
		since      time.Time
		code, msg  string
	}{
		{name: "Empty", body: ""},
		{name: "All", body: " {} "},
		{name: "IDs", body: `{"ids": ["a", "b"]}`, ids: []string{"a", "b"}},
		{name: "Since", body: `{"givenUpSince": "2026-01-01T11:00:00+01:00"}`, since: since},
		{name: "NotJSON", body: `{"ids": [}`, code: eventgrid.EInvalidJSON, msg: "not valid JSON"},
		{name: "NotObject", body: `["a"]`, code: eventgrid.EBadRequest, msg: "must be a JSON object"},
		{name: "Twice", body: `{"ids": ["a"], "ids": ["b"]}`, code: eventgrid.EBadRequest, msg: `names "ids" more than once`},
		{name: "LoneSurrogate", body: `{"ids": ["\ud800"]}`, code: eventgrid.EInvalidJSON, msg: "unpaired UTF-16 surrogate escape at byte offset"},
		{name: "Unknown", body: `{"id": ["a"]}`, code: eventgrid.EUnknownMember, msg: `"id" is not a member of :redrive's body`},
		{name: "IDsNotArray", body: `{"ids": "a"}`, code: eventgrid.EBadRequest, msg: "ids must be a JSON array"},
		{name: "IDNotString", body: `{"ids": ["a", 2]}`, code: eventgrid.EBadRequest, msg: "ids must be a JSON array"},
		{name: "NoIDs", body: `{"ids": []}`, code: eventgrid.EBadRequest, msg: "ids holds no event id"},
		{name: "BadTime", body: `{"givenUpSince": "yesterday"}`, code: eventgrid.EBadRequest, msg: `givenUpSince must be an RFC 3339 time`},
		{name: "TimeNotString", body: `{"givenUpSince": 17}`, code: eventgrid.EBadRequest, msg: `got 17`},
		{name: "Both", body: `{"ids": ["a"], "givenUpSince": "2026-01-01T10:00:00Z"}`, code: eventgrid.EBadRequest, msg: "both ids and givenUpSince"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := decodeRedrive([]byte(tt.body))
			if tt.code != "" {
				if eventgrid.ErrorCode(err) != tt.code || !strings.Contains(eventgrid.ErrorMessage(err), tt.msg) {
					t.Fatalf("error %v, want %s mentioning %q", err, tt.code, tt.msg)
				}
				return
			}
			if err != nil || strings.Join(f.IDs, ",") != strings.Join(tt.ids, ",") || !f.Since.Equal(tt.since) {
				t.Fatalf("= %+v, %v", f, err)
			}
		})
	}
}

// TestResourceOf: the kinds of resource a path names, and the paths that
// name none.
func TestResourceOf(t *testing.T) {
	for p, want := range map[string]resourceKind{
		"/topics/t":                          topicResource,
		"/TOPICS/t":                          topicResource,
		"/topics/t/eventSubscriptions/s":     subscriptionResource,
		"/topics/t/EventSubscriptions/s":     subscriptionResource,
		"":                                   noResource,
		"/":                                  noResource,
		"topics/t":                           noResource,
		"/topics":                            noResource,
		"/topics/":                           noResource,
		"/topics/$publish":                   noResource,
		"/topics/t/":                         noResource,
		"/topics/t/events":                   noResource,
		"/topics/t/eventSubscriptions":       noResource,
		"/topics/t/eventSubscriptions/":      noResource,
		"/topics/t/eventSubscriptions/$view": noResource,
		"/topics/t/eventSubscriptions/s/":    noResource,
		"/topics/t/eventSubscriptions/s/x":   noResource,
		"/subscriptions/t":                   noResource,
	} {
		if got := resourceOf(p); got != want {
			t.Errorf("resourceOf(%q) = %v, want %v", p, got, want)
		}
	}
}
