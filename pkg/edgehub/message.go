package edgehub

import (
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// Topic returns the MQTT topic of a module message on output, with the
// property bag edgeHub reads: the output name, content type application/json
// and encoding utf-8, then the custom properties props (name, value pairs),
// every key and value URL-encoded:
//
//	devices/<d>/modules/<m>/messages/events/%24.on=<output>&%24.ct=application%2Fjson&%24.ce=utf-8/
func Topic(deviceID, moduleID, output string, props ...string) string {
	var b strings.Builder
	b.Grow(96 + len(deviceID) + len(moduleID) + len(output))
	b.WriteString("devices/")
	b.WriteString(deviceID)
	b.WriteString("/modules/")
	b.WriteString(moduleID)
	b.WriteString("/messages/events/%24.on=")
	b.WriteString(urlEncode(output))
	b.WriteString("&%24.ct=application%2Fjson&%24.ce=utf-8")
	for i := 0; i+1 < len(props); i += 2 {
		b.WriteByte('&')
		b.WriteString(urlEncode(props[i]))
		b.WriteByte('=')
		b.WriteString(urlEncode(props[i+1]))
	}
	b.WriteByte('/')
	return b.String()
}

// properties returns the custom delivery properties as name, value pairs,
// Dynamic values taken from ev (the batch's first event); a missing value,
// or one that is not a string, number or boolean, leaves its property out.
func properties(attrs []eventgrid.DeliveryAttribute, ev []byte) []string {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]string, 0, 2*len(attrs))
	for _, a := range attrs {
		if !strings.EqualFold(a.Type, "Dynamic") {
			out = append(out, a.Name, a.Value)
			continue
		}
		v, ok := rawjson.Lookup(ev, strings.Split(a.SourceField, "."))
		if !ok {
			continue
		}
		switch rawjson.KindOf(v) {
		case rawjson.String:
			if s, ok := rawjson.Unquote(v); ok {
				out = append(out, a.Name, s)
			}
		case rawjson.Number, rawjson.Bool:
			out = append(out, a.Name, string(rawjson.TrimSpace(v)))
		}
	}
	return out
}

// payload is the message body: the JSON array a webhook would get.
func payload(events [][]byte) []byte {
	n := 2
	for _, ev := range events {
		n += len(ev) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, ev := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ev...)
	}
	return append(b, ']')
}
