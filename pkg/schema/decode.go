package schema

import (
	"bytes"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// DecodeBatch decodes a request body that must be a JSON array of events for
// a topic of schema s. Every element must be a JSON object. Validation is
// all-or-nothing: the first bad event makes it return an error and no events.
// accepted is stamped into every Event.Accepted.
//
// It returns an *eventgrid.Error with code EInvalidJSON when body is not
// valid JSON, is not an array or has an element that is not an object;
// EInvalidEvent when an event fails validation; EPayloadTooLarge when an
// event's Body would exceed eventgrid.MaxEventSize; and EInvalidSchema when
// s is not a known schema. An empty array yields no events and no error.
//
// The events keep nothing of body, which the caller may reuse once
// DecodeBatch returns: their bodies and structs are allocated together per
// request (see arena). DecodeBatch is safe for concurrent use.
func DecodeBatch(s eventgrid.InputSchema, topic string, body []byte, accepted time.Time) ([]*eventgrid.Event, error) {
	return decodeBatch(new(Scratch), s, topic, body, accepted)
}

func decodeBatch(scratch *Scratch, s eventgrid.InputSchema, topic string, body []byte, accepted time.Time) ([]*eventgrid.Event, error) {
	n, err := checkJSON(body)
	if err != nil {
		return nil, err
	}
	d, err := newDecoder(scratch, s, topic, accepted, len(body), n)
	if err != nil {
		return nil, err
	}
	if k := rawjson.KindOf(body); k != rawjson.Array {
		return nil, eventgrid.Errorf(eventgrid.EInvalidJSON,
			"the request body must be a JSON array of events, not %s", kindName(k))
	}
	events := scratch.ptrs[:0]
	if n == 1 {
		// One event, as single-event publishers send it: the valid array
		// holds just that value between its brackets, found without the
		// scan for its end that ArrayEach makes.
		arr := rawjson.TrimSpace(body)
		ev, err := d.decode(0, rawjson.TrimSpace(arr[1:len(arr)-1]), "")
		if err != nil {
			return nil, err
		}
		scratch.ptrs = append(events, ev)
		return scratch.ptrs, nil
	}
	rawjson.ArrayEach(body, func(i int, elem []byte) bool {
		var ev *eventgrid.Event
		ev, err = d.decode(i, elem, "")
		if err != nil {
			return false
		}
		events = append(events, ev)
		return true
	})
	scratch.ptrs = events
	if err != nil {
		return nil, err
	}
	return events, nil
}

// DecodeOne decodes a body that must be ONE JSON object (the single-event
// route POST /topics/{t}/events/{id}, or a structured-mode
// application/cloudevents+json body). For EventGridSchema and CloudEvents, if
// the body has no id and defaultID != "", defaultID is used; if both exist
// and differ, it is an error. defaultID is ignored for CustomEventSchema.
//
// It returns the same errors as DecodeBatch, with EInvalidJSON when body is
// not an object and index 0 in every event error. The event keeps nothing of
// body. DecodeOne is safe for concurrent use.
func DecodeOne(s eventgrid.InputSchema, topic string, body []byte, defaultID string, accepted time.Time) (*eventgrid.Event, error) {
	return decodeOne(new(Scratch), s, topic, body, defaultID, accepted)
}

func decodeOne(scratch *Scratch, s eventgrid.InputSchema, topic string, body []byte, defaultID string, accepted time.Time) (*eventgrid.Event, error) {
	if _, err := checkJSON(body); err != nil {
		return nil, err
	}
	if err := checkDefaultIDText(defaultID); err != nil {
		return nil, err
	}
	d, err := newDecoder(scratch, s, topic, accepted, len(body), 1)
	if err != nil {
		return nil, err
	}
	if k := rawjson.KindOf(body); k != rawjson.Object {
		return nil, eventgrid.Errorf(eventgrid.EInvalidJSON,
			"the request body must be a single JSON object, not %s", kindName(k))
	}
	return d.decode(0, rawjson.TrimSpace(body), defaultID)
}

// checkDefaultIDText refuses an event id from the request's URL that is
// not valid UTF-8 (a percent-encoded byte such as %FF), which would make
// the event's body invalid JSON text.
func checkDefaultIDText(defaultID string) error {
	if utf8.ValidString(defaultID) {
		return nil
	}
	return fieldError(0, "id", "given by the URL is not valid UTF-8")
}

// decoder holds what one call needs across the events of a request.
type decoder struct {
	mem      *arena
	schema   eventgrid.InputSchema
	topic    string
	accepted time.Time
	// qtopic is topic as a JSON string literal, for EventGridSchema bodies,
	// and plainTopic whether it is plain (see plainText).
	qtopic     []byte
	plainTopic bool
	// exts is CloudEvents scratch space, reused per event.
	exts []extension
	// toCloudEvents: build EventGridSchema events as their CloudEvents
	// (see Scratch.ToCloudEvents).
	toCloudEvents bool
	// foldNames: lower-case CloudEvents extension names (see
	// Scratch.FoldExtensionNames).
	foldNames bool
}

// newDecoder returns a decoder for a request body of bodyLen bytes holding
// events events.
func newDecoder(scratch *Scratch, s eventgrid.InputSchema, topic string, accepted time.Time, bodyLen, events int) (*decoder, error) {
	d := &decoder{schema: s, topic: topic, accepted: accepted, foldNames: scratch.FoldExtensionNames}
	// Canonical bodies are about as long as the input, and EventGridSchema
	// events gain their topic and metadataVersion: room for that, and for a
	// default id, without the slack a proportional margin would waste.
	perEvent := len(`,"topic":"",,"metadataVersion":"1"`) + len(topic) + 2*len(`"":`)
	switch s {
	case eventgrid.EventGridSchema:
		d.qtopic = rawjson.AppendString(nil, topic)
		_, d.plainTopic = plainText(d.qtopic)
		// The CloudEvent's source is then the topic's literal as it is.
		d.toCloudEvents = scratch.ToCloudEvents && d.plainTopic && (pathOfUnreserved(topic) || validURIReference(topic))
		if d.toCloudEvents { // their CloudEvents gain more: a source, specversion and datacontenttype
			perEvent = len(`"specversion":"1.0",,"source":"",,"datacontenttype":"application/json"`) + len(topic) + 2*len(`"":`)
		}
	case eventgrid.CustomEventSchema, eventgrid.CloudEventSchemaV1_0:
	default:
		return nil, eventgrid.Errorf(eventgrid.EInvalidSchema,
			"unknown input schema %q; expected one of %s", string(s), eventgrid.SchemaNames)
	}
	d.mem = newArena(bodyLen+events*perEvent+64, events, scratch)
	return d, nil
}

// decode decodes the element elem, the event at index i.
func (d *decoder) decode(i int, elem []byte, defaultID string) (*eventgrid.Event, error) {
	if k := rawjson.KindOf(elem); k != rawjson.Object {
		return nil, eventgrid.Errorf(eventgrid.EInvalidJSON,
			"event at index %d must be a JSON object, not %s", i, kindName(k))
	}
	switch d.schema {
	case eventgrid.EventGridSchema:
		return d.eventGrid(i, elem, defaultID)
	case eventgrid.CloudEventSchemaV1_0:
		return d.cloudEvent(i, elem, defaultID)
	}
	if len(elem) > eventgrid.MaxEventSize {
		return nil, tooLarge(i, len(elem))
	}
	ev := d.mem.event()
	ev.Body, ev.Accepted = append(d.mem.body(len(elem)), elem...), d.accepted
	return ev, nil
}

// checkJSON returns EInvalidJSON unless body is one valid JSON value that
// every reader reads the same way (see strictError), and the number of
// elements when it is an array. The common case costs one pass of
// rawjson.ValidStrict; only a failure pays for finding the offset.
func checkJSON(body []byte) (elements int, err error) {
	n, err := rawjson.ValidStrict(body)
	if err == nil {
		return n, nil
	}
	if se, ok := err.(*rawjson.StrictError); ok {
		return 0, strictError(se, "", -1)
	}
	return 0, invalidJSON("the request body", body)
}

// strictError turns a rawjson.StrictError into the API error. prefix goes
// before its path ("data" when the document is an event's data); index, if
// not negative, is the event's index instead of the element's.
//
// Such input is valid JSON but not I-JSON (RFC 7493): a member name given
// twice, which filters would read one way (the first) and receivers another
// (most keep the last), so that an event could pass a filter it should not;
// invalid UTF-8; or a lone surrogate escape, which readers decode
// differently.
func strictError(se *rawjson.StrictError, prefix string, index int) error {
	i := se.Element
	if index >= 0 {
		i = index
	}
	path := se.Path
	if prefix != "" {
		path = prefix + "." + path
		if se.Path == "" || se.Path[0] == '[' {
			path = prefix + se.Path
		}
	}
	switch se.Kind {
	case rawjson.DuplicateName:
		return eventgrid.Errorf(eventgrid.EInvalidJSON,
			"event at index %d: member name %s appears more than once in its object; "+
				"member names must be unique, compared ignoring case (RFC 7493 §2.3)", i, quoteForMessage(path))
	}
	what := "a string"
	switch {
	case se.InName && path == "":
		what = "a member name"
	case se.InName:
		what = "a member name in " + quoteForMessage(path)
	case path != "":
		what = quoteForMessage(path)
	}
	if se.Kind == rawjson.LoneSurrogate {
		return eventgrid.Errorf(eventgrid.EInvalidJSON,
			"event at index %d: %s holds an unpaired UTF-16 surrogate escape (at byte offset %d); "+
				"JSON text must be Unicode (RFC 7493 §2.1)", i, what, se.Offset)
	}
	return eventgrid.Errorf(eventgrid.EInvalidJSON,
		"event at index %d: %s is not valid UTF-8 (at byte offset %d); JSON text must be UTF-8 (RFC 8259 §8.1)",
		i, what, se.Offset)
}

// invalidJSON says where and why body, which is not JSON, stops being
// JSON: its line and column, its byte offset, and what JSON allows there.
func invalidJSON(what string, body []byte) error {
	se := rawjson.Locate(body)
	if se == nil {
		return eventgrid.Errorf(eventgrid.EInvalidJSON, "%s is not valid JSON", what)
	}
	return eventgrid.Errorf(eventgrid.EInvalidJSON, "%s is not valid JSON: %s (at byte offset %d)", what, se, se.Offset)
}

func kindName(k rawjson.Kind) string {
	switch k {
	case rawjson.Null:
		return "null"
	case rawjson.Bool:
		return "a boolean"
	case rawjson.Number:
		return "a number"
	case rawjson.String:
		return "a string"
	case rawjson.Object:
		return "an object"
	case rawjson.Array:
		return "an array"
	}
	return "empty"
}

// fieldError reports a field of the event at index i that fails validation.
func fieldError(i int, field, format string, args ...any) error {
	return eventgrid.Errorf(eventgrid.EInvalidEvent, "event at index %d: %s "+format,
		append([]any{i, quoteForMessage(field)}, args...)...)
}

func tooLarge(i, n int) error {
	return eventgrid.Errorf(eventgrid.EPayloadTooLarge,
		"event at index %d is %d bytes, over the limit of %d bytes per event", i, n, eventgrid.MaxEventSize)
}

// quoteForMessage quotes a client value for an error message, shortened so
// that a huge value cannot blow up the response.
func quoteForMessage(s string) string {
	const maxLen = 64
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		return jsonQuote(s[:cut]) + "…"
	}
	return jsonQuote(s)
}

// literalForMessage is quoteForMessage for a JSON value as written.
func literalForMessage(v []byte) string {
	if s, ok := rawjson.Unquote(v); ok {
		return quoteForMessage(s)
	}
	if len(v) > 64 {
		return string(v[:64]) + "…"
	}
	return string(v)
}

func jsonQuote(s string) string { return string(rawjson.AppendString(nil, s)) }

// members collects the known members of one event object. Values are
// trimmed JSON values as rawjson gives them; a nil value means absent.
type members struct {
	val   [maxKnown][]byte
	exact [maxKnown]bool
}

const maxKnown = 10

// set records value v for field f: the first exact match of the name wins,
// then the first case-insensitive one.
func (m *members) set(f int, exact bool, v []byte) {
	if m.val[f] == nil || (exact && !m.exact[f]) {
		m.val[f], m.exact[f] = v, exact
	}
}

// fieldIndex returns the index in names of the raw key k (as rawjson gives
// it, escapes not decoded), matched case-insensitively, and whether it
// matched exactly; f is -1 when k is none of names.
func fieldIndex(names []string, k []byte) (f int, exact bool) {
	if plainASCII(k) {
		for i, n := range names {
			if len(n) == len(k) && equalFoldASCII(k, n) {
				return i, string(k) == n
			}
		}
		return -1, false
	}
	// Escapes or non-ASCII: rare, so let rawjson decode and fold.
	for i, n := range names {
		if rawjson.KeyEqual(k, n) {
			return i, true
		}
	}
	for i, n := range names {
		if rawjson.KeyEqualFold(k, n) {
			return i, false
		}
	}
	return -1, false
}

// plainASCII reports whether b is ASCII without backslashes, so that it
// means what it says and case folding is ASCII folding.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

func equalFoldASCII(b []byte, s string) bool {
	for i := 0; i < len(b); i++ {
		if lowerASCII(b[i]) != lowerASCII(s[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// unquote is rawjson.Unquote without a copy when the literal has no
// escapes; the result then shares v's memory and must not outlive a call.
func unquote(v []byte) (string, bool) {
	if !isString(v) {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return unsafe.String(unsafe.SliceData(inner), len(inner)), true
	}
	return rawjson.Unquote(v)
}

func isString(v []byte) bool { return len(v) >= 2 && v[0] == '"' }

func isNull(v []byte) bool { return len(v) > 0 && v[0] == 'n' }
