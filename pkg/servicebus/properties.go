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
		return rawjson.AppendString(dst, a.Value), true
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
		dst = rawjson.AppendString(dst, string(ev))
		if len(attrs) > 0 {
			dst = append(dst, `,"UserProperties":{`...)
			first := true
			for _, a := range attrs {
				mark := len(dst)
				if !first {
					dst = append(dst, ',')
				}
				dst = rawjson.AppendString(dst, a.Name)
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
