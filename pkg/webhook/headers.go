package webhook

import (
	"net/http"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// Property is one custom delivery property with its value for a delivery.
type Property struct{ Name, Value string }

// Properties returns the custom delivery properties (B5) of a delivery whose
// first event is body: Static values as they are, Dynamic ones from the
// event's value at their source field when it is a string, number or
// boolean; a missing field or another kind of value leaves the property
// out. The Event Hubs and Service Bus senders send them as message
// properties; this package as headers.
func Properties(attrs []eventgrid.DeliveryAttribute, body []byte) []Property {
	var out []Property
	for _, a := range attrs {
		if a.Type != "Dynamic" {
			out = append(out, Property{a.Name, a.Value})
			continue
		}
		if v, ok := fieldValue(body, a.SourceField); ok {
			out = append(out, Property{a.Name, v})
		}
	}
	return out
}

// fieldValue reads a filter-style key (data.a.b, or an envelope name) of an
// event as header text.
func fieldValue(body []byte, key string) (string, bool) {
	v := body
	for _, seg := range strings.Split(key, ".") {
		var ok bool
		if v, ok = rawjson.Member(v, seg); !ok {
			return "", false
		}
	}
	v = rawjson.TrimSpace(v)
	switch rawjson.KindOf(v) {
	case rawjson.String:
		s, ok := rawjson.Unquote(v)
		if !ok || len(s) > 4096 || !validFieldValue(s) {
			return "", false
		}
		return s, true
	case rawjson.Number, rawjson.Bool:
		return string(v), true
	}
	return "", false
}

// validFieldValue reports whether s may be an HTTP header value: no control
// characters but tab (RFC 9110 §5.5). Go's HTTP client refuses a request
// with any other in a header, which would fail the whole delivery.
func validFieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7F {
			return false
		}
	}
	return true
}

// setProperties adds the custom delivery properties as headers.
func setProperties(h http.Header, attrs []eventgrid.DeliveryAttribute, bodies [][]byte) {
	if len(attrs) == 0 || len(bodies) == 0 {
		return
	}
	for _, p := range Properties(attrs, bodies[0]) {
		h.Set(p.Name, p.Value)
	}
}
