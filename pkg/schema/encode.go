package schema

import (
	"bytes"
	"unsafe"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// DataVersion returns the dataVersion of a canonical EventGridSchema body,
// for the aeg-data-version header; "" when it has none. A body that ends as
// the decoder ends one is read from its end, without scanning its data,
// unless it names dataVersion before that: any other body is scanned.
func DataVersion(body []byte) string {
	if literal, keyAt, ok := dataVersionAtEnd(body); ok && !bytes.Contains(body[:keyAt], []byte("dataVersion")) {
		s, _ := rawjson.Unquote(literal)
		return s
	}
	return dataVersionByScan(body)
}

// dataVersionByScan is DataVersion for any body: the member found by
// walking the object.
func dataVersionByScan(body []byte) string {
	v, ok := rawjson.Member(body, "dataVersion")
	if !ok {
		return ""
	}
	s, _ := rawjson.Unquote(v)
	return s
}

// WithTopic returns a copy of a canonical EventGridSchema body whose "topic"
// is topicName, or null when topicName is "" (forwarding to cloud Event Grid,
// docs/design.md#eventgrid-destination).
// A body without a "topic" member gets one as its first member; a
// body that is not a JSON object is returned copied unchanged. body is never
// modified. WithTopic is safe for concurrent use.
func WithTopic(body []byte, topicName string) []byte {
	lit := []byte("null")
	if topicName != "" {
		lit = rawjson.AppendString(nil, topicName)
	}
	var val []byte
	isObject := rawjson.ObjectEach(body, func(k, v []byte) bool {
		if rawjson.KeyEqual(k, "topic") {
			val = v
			return false
		}
		return true
	})
	if !isObject {
		return append([]byte(nil), body...)
	}
	if val == nil {
		// Insert right after the opening brace.
		open := 0
		for body[open] != '{' {
			open++
		}
		out := make([]byte, 0, len(body)+len(lit)+len(`"topic":,`))
		out = append(out, body[:open+1]...)
		out = append(out, `"topic":`...)
		out = append(out, lit...)
		if !emptyObject(body[open:]) {
			out = append(out, ',')
		}
		return append(out, body[open+1:]...)
	}
	// val is body[start:start+len(val)], so the capacities give its offset.
	start := cap(body) - cap(val)
	out := make([]byte, 0, len(body)-len(val)+len(lit))
	out = append(out, body[:start]...)
	out = append(out, lit...)
	return append(out, body[start+len(val):]...)
}

func emptyObject(obj []byte) bool {
	empty := true
	rawjson.ObjectEach(obj, func(_, _ []byte) bool {
		empty = false
		return false
	})
	return empty
}

// stringAt returns the string value of the JSON string literal that starts
// at body[off] and is n bytes long. When the literal has no escapes the
// result shares body's memory instead of copying it: this is sound because
// an Event's Body is never modified once decoding has built it, and the
// string keeps the whole Body alive, which the Event does anyway.
func stringAt(body []byte, off, n int) string {
	s, _ := textAt(body, off, n)
	return s
}

// textAt is stringAt, and reports whether the literal is plain: printable
// ASCII without escapes (see plainText), as most are, which it finds a word
// at a time.
func textAt(body []byte, off, n int) (s string, plain bool) {
	lit := body[off : off+n]
	if s, ok := plainText(lit); ok {
		return s, true
	}
	inner := lit[1 : n-1]
	for _, c := range inner {
		if c == '\\' {
			s, _ := rawjson.Unquote(lit)
			return s, false
		}
	}
	return unsafe.String(&inner[0], len(inner)), false
}
