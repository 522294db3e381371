package eventgrid

import (
	"strings"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// MaxAttributeValueSize is the largest Dynamic delivery attribute value, in
// bytes, that is sent; the same bound applies to Static values at PUT.
const MaxAttributeValueSize = 4096

// Property is one delivery attribute with its value for one event.
type Property struct {
	Name  string
	Value string
	// Literal is true when Value is a JSON number or boolean taken from the
	// event: destinations whose properties have types (Service Bus, Event
	// Hubs) send it as that type; the others send the text.
	Literal bool
}

// Properties returns the delivery attributes' values for event, the one
// rule set every destination uses: a Static attribute gives its Value; a
// Dynamic one gives the value at its SourceField (dot-separated member
// names, matched as filters match keys) when that is a string of at most
// MaxAttributeValueSize bytes without CR, LF or NUL, a number or a boolean.
// A Dynamic attribute whose field is missing or holds anything else (null,
// an object, an array, a longer or multi-line string) is left out, so that
// no destination gets a value another would refuse.
func Properties(attrs []DeliveryAttribute, event []byte) []Property {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]Property, 0, len(attrs))
	for _, a := range attrs {
		if !strings.EqualFold(a.Type, "Dynamic") {
			out = append(out, Property{Name: a.Name, Value: a.Value})
			continue
		}
		if p, ok := dynamicValue(a, event); ok {
			out = append(out, p)
		}
	}
	return out
}

func dynamicValue(a DeliveryAttribute, event []byte) (Property, bool) {
	v, ok := rawjson.Lookup(event, strings.Split(a.SourceField, "."))
	if !ok {
		return Property{}, false
	}
	v = rawjson.TrimSpace(v)
	switch rawjson.KindOf(v) {
	case rawjson.String:
		s, ok := rawjson.Unquote(v)
		if !ok || len(s) > MaxAttributeValueSize || ControlCharAt(s) >= 0 {
			return Property{}, false
		}
		return Property{Name: a.Name, Value: s}, true
	case rawjson.Number, rawjson.Bool:
		return Property{Name: a.Name, Value: string(v), Literal: true}, true
	}
	return Property{}, false
}

// ControlCharAt returns the index of the first byte of s that an HTTP field
// value may not hold (a control character other than tab, RFC 9110 section
// 5.5), or -1. Go's HTTP client refuses a request with one in a header, so
// such a value would fail every delivery.
func ControlCharAt(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7F {
			return i
		}
	}
	return -1
}
