package schema

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// ErrNotConvertible is returned by EventGridToCloudEvent for a body it
// cannot turn into a valid CloudEvent.
var ErrNotConvertible = errors.New("schema: event cannot be converted to a CloudEvent")

// Converts reports whether the broker converts events published in topic's
// schema into delivery's for a subscription, which is the case for exactly
// one pair: EventGridSchema to CloudEventSchemaV1_0, as cloud Event Grid
// does (it does not convert the other way, nor custom events).
func Converts(topic, delivery eventgrid.InputSchema) bool {
	return topic == eventgrid.EventGridSchema && delivery == eventgrid.CloudEventSchemaV1_0
}

// EventGridToCloudEvent converts a canonical EventGridSchema body (as the
// decoder builds it, with its topic member set) into a canonical CloudEvents
// 1.0 JSON object:
//
//	id → id, topic → source, subject → subject, eventType → type,
//	eventTime → time, dataVersion → dataversion (an extension),
//	data → data with datacontenttype application/json, and specversion 1.0.
//
// The result is always a valid CloudEvent, within the rules publishing to
// a CloudEvents topic enforces but one: an id or eventType that is only
// white space, which EventGridSchema accepts and a CloudEvent may hold,
// stays as it is, as it cannot be left out. An empty or blank subject or
// dataVersion is left out (an attribute that is present must not be
// empty), as is an eventTime that is not an RFC 3339 timestamp (the decoder
// refuses one, but a body built elsewhere may hold it). A control character
// or Unicode noncharacter, which EventGridSchema allows and a CloudEvents
// String does not, becomes U+FFFD; a topic that is not a URI reference is
// percent-encoded. It returns an error wrapping ErrNotConvertible when the
// body is not a JSON object or its id, topic or eventType is missing or
// empty, which a CloudEvent cannot be without. body is never modified; the
// result shares no memory with it. EventGridToCloudEvent is safe for
// concurrent use.
func EventGridToCloudEvent(body []byte) ([]byte, error) {
	return appendEventGridToCloudEvent(nil, body)
}

// appendEventGridToCloudEvent appends EventGridToCloudEvent(body) to dst.
func appendEventGridToCloudEvent(dst, body []byte) ([]byte, error) {
	var m members
	isObject := rawjson.ObjectEach(body, func(k, v []byte) bool {
		if f, exact := fieldIndex(egNames, k); f >= 0 && (f == egData || !isNull(v)) {
			m.set(f, exact, v)
		}
		return true
	})
	if !isObject {
		return dst, errors.Join(ErrNotConvertible, errors.New("the event is not a JSON object"))
	}
	return appendCloudEvent(dst, &m, len(body), false)
}

// CloudEventOf is EventGridToCloudEvent of ev.Body, ev being an event of an
// EventGridSchema topic. When the decoder built that Body, its members are
// read from their known places, without scanning the data (see
// eventgrid.Event.DataAt); the result is the same. For an event the
// decoder built as its CloudEvent (eventgrid.Event.Converted), it is a copy
// of ev.Body.
func CloudEventOf(ev *eventgrid.Event) ([]byte, error) {
	return AppendCloudEventOf(nil, ev)
}

// AppendCloudEventOf appends CloudEventOf(ev) to dst and returns the
// result; on an error, dst is returned unchanged. Given room for ev.Body
// and a hundred bytes more (the attributes' names) in dst, the conversion
// allocates nothing.
func AppendCloudEventOf(dst []byte, ev *eventgrid.Event) ([]byte, error) {
	if ev.Converted { // the decoder wrote the CloudEvent already
		return append(dst, ev.Body...), nil
	}
	var m members
	if ev.Plain && plainMembers(ev, &m) {
		return appendCloudEvent(dst, &m, len(ev.Body), true)
	}
	if ev.DataAt <= 0 || !canonicalMembers(ev.Body, int(ev.DataAt), &m) {
		return appendEventGridToCloudEvent(dst, ev.Body)
	}
	return appendCloudEvent(dst, &m, len(ev.Body), false)
}

// appendCloudEvent appends the CloudEvent of the EventGridSchema members
// m, read from a body of size bytes, to dst. plain says that the members
// are those of an Event the decoder marked Plain: their string literals
// are then printable ASCII without escapes, which the CloudEvent takes as
// they are, and the eventTime is a timestamp the decoder checked.
func appendCloudEvent(dst []byte, m *members, size int, plain bool) ([]byte, error) {
	for _, f := range [...]int{egID, egTopic, egEventType} {
		if v := m.val[f]; !isString(v) || len(v) == 2 {
			return dst, errors.Join(ErrNotConvertible, errors.New(egNames[f]+" is missing or empty"))
		}
	}

	out := dst
	if cap(out)-len(out) < size {
		out = make([]byte, len(dst), len(dst)+size+96)
		copy(out, dst)
	}
	out = append(out, kcID...)
	out = appendTextOf(out, m.val[egID], plain)
	out = append(out, kcSource...)
	out = appendSource(out, m.val[egTopic])
	out = append(out, kcType...)
	out = appendTextOf(out, m.val[egEventType], plain)
	if v := m.val[egSubject]; presentTextOf(v, plain) {
		out = append(out, kcSubject...)
		out = appendTextOf(out, v, plain)
	}
	if v := m.val[egEventTime]; isString(v) && (plain || validTimestampLiteral(v)) {
		out = append(out, kcTime...)
		out = append(out, v...)
	}
	data := m.val[egData]
	if data != nil {
		out = append(out, kcContentType...)
	}
	if v := m.val[egDataVersion]; presentTextOf(v, plain) {
		out = append(out, kcDataVersion...)
		out = appendTextOf(out, v, plain)
	}
	if data != nil {
		out = append(out, kcData...)
		out = append(out, data...)
	}
	return append(out, '}'), nil
}

// presentText reports whether v is a JSON string literal that is neither
// empty nor only white space: an optional attribute the CloudEvent keeps.
func presentText(v []byte) bool {
	s, ok := plainOrUnquoted(v)
	return ok && !isBlank(s)
}

// validTimestampLiteral reports whether the JSON string literal v holds
// an RFC 3339 timestamp.
func validTimestampLiteral(v []byte) bool {
	s, _ := plainOrUnquoted(v)
	return validTimestamp(s)
}

// presentTextOf is presentText(v), for a plain literal v (printable ASCII
// without escapes) without checking that again.
func presentTextOf(v []byte, plain bool) bool {
	if !plain {
		return presentText(v)
	}
	return len(v) > 2 && (v[1] != ' ' || strings.TrimSpace(string(v[1:len(v)-1])) != "")
}

// appendTextOf is appendText(out, v), for a plain literal v without
// checking that again: appendText keeps one as it is.
func appendTextOf(out, v []byte, plain bool) []byte {
	if plain {
		return append(out, v...)
	}
	return appendText(out, v)
}

// plainOrUnquoted is unquote(v), taking the common case (printable ASCII
// without escapes, which plainText checks a word at a time) without a
// search for a backslash of its own.
func plainOrUnquoted(v []byte) (string, bool) {
	if s, ok := plainText(v); ok {
		return s, true
	}
	return unquote(v)
}

// appendText appends the JSON string literal v with every character that a
// CloudEvents String cannot hold replaced by U+FFFD.
func appendText(out, v []byte) []byte {
	if _, plain := plainText(v); plain {
		return append(out, v...)
	}
	s, _ := unquote(v)
	if _, bad := badStringRune(s); !bad {
		return append(out, v...)
	}
	return rawjson.AppendString(out, strings.Map(func(r rune) rune {
		if _, bad := badStringRune(string(r)); bad {
			return utf8.RuneError
		}
		return r
	}, s))
}

// appendSource appends the JSON string literal v, percent-encoded when it
// is not a URI reference: every byte but unreserved ones and '/'.
func appendSource(out, v []byte) []byte {
	s, plain := plainText(v)
	if !plain {
		s, _ = unquote(v)
	}
	if pathOfUnreserved(s) || validURIReference(s) {
		if plain {
			return append(out, v...)
		}
		return appendText(out, v)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; isUnreserved(c) || c == '/' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return rawjson.AppendString(out, b.String())
}

// pathOfUnreserved reports whether s is a non-empty run of unreserved
// characters and '/', as the topic paths the decoder writes are: a URI
// reference (a path, or after "//" an authority of unreserved characters
// and a path), found so without validURIReference's parse.
func pathOfUnreserved(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isUnreserved(c) && c != '/' {
			return false
		}
	}
	return s != ""
}
