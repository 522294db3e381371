package edgehub

import (
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
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
// Dynamic values taken from ev (the batch's first event) by the rules every
// destination shares (eventgrid.Properties).
func properties(attrs []eventgrid.DeliveryAttribute, ev []byte) []string {
	ps := eventgrid.Properties(attrs, ev)
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, 0, 2*len(ps))
	for _, p := range ps {
		out = append(out, p.Name, p.Value)
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
