package servicebus

import (
	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// appendBatch lays out the batch format: one {"Body": "<event JSON>",
// "UserProperties": {...}} per event, each with its own event's values
// (eventgrid.Properties).
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
			for j, p := range eventgrid.Properties(attrs, ev) {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = rawjson.AppendString(dst, p.Name)
				dst = append(dst, ':')
				if p.Literal {
					dst = append(dst, p.Value...) // a number or boolean keeps its type
				} else {
					dst = rawjson.AppendString(dst, p.Value)
				}
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
