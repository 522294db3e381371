package servicebus

import (
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// attributeLiteral returns a delivery attribute's value for the event ev as
// a JSON literal: a Static value as a string, a Dynamic one as the string,
// number or boolean found at its SourceField. ok is false when a Dynamic
// value is missing or of another kind: the property is then left out.
func attributeLiteral(dst []byte, a eventgrid.DeliveryAttribute, ev []byte) ([]byte, bool) {
	if !strings.EqualFold(a.Type, "Dynamic") {
		return appendJSONString(dst, a.Value), true
	}
	v, ok := rawjson.Lookup(ev, strings.Split(a.SourceField, "."))
	if !ok {
		return dst, false
	}
	switch rawjson.KindOf(v) {
	case rawjson.String, rawjson.Number, rawjson.Bool:
		return append(dst, rawjson.TrimSpace(v)...), true
	}
	return dst, false
}

// appendBatch lays out the batch format: one {"Body": "<event JSON>",
// "UserProperties": {...}} per event, each with its own event's values.
func appendBatch(dst []byte, events [][]byte, attrs []eventgrid.DeliveryAttribute) []byte {
	dst = append(dst, '[')
	for i, ev := range events {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"Body":`...)
		dst = appendJSONString(dst, string(ev))
		if len(attrs) > 0 {
			dst = append(dst, `,"UserProperties":{`...)
			first := true
			for _, a := range attrs {
				mark := len(dst)
				if !first {
					dst = append(dst, ',')
				}
				dst = appendJSONString(dst, a.Name)
				dst = append(dst, ':')
				var ok bool
				if dst, ok = attributeLiteral(dst, a, ev); !ok {
					dst = dst[:mark]
					continue
				}
				first = false
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal. s is valid UTF-8
// (event bodies are validated JSON), so only quotes, backslashes and
// control characters need escaping.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
