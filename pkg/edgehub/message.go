package edgehub

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// Topic returns the MQTT topic of a module message on output, with the
// property bag edgeHub reads: the output name, content type application/json
// and encoding utf-8, then the custom properties props (name, value pairs),
// every key and value percent-encoded:
//
//	devices/<d>/modules/<m>/messages/events/%24.on=<output>&%24.ct=application%2Fjson&%24.ce=utf-8/
//
// Percent-encoding (a space is %20, never '+') keeps the MQTT wildcards '+'
// and '#' and the NUL character, which a PUBLISH topic must not contain
// (MQTT 3.1.1, sections 1.5.3 and 4.7.3), out of the property bag whatever
// the names and values hold.
func Topic(deviceID, moduleID, output string, props ...string) string {
	var b strings.Builder
	b.Grow(96 + len(deviceID) + len(moduleID) + len(output))
	b.WriteString("devices/")
	b.WriteString(deviceID)
	b.WriteString("/modules/")
	b.WriteString(moduleID)
	b.WriteString("/messages/events/%24.on=")
	b.WriteString(percentEncode(output))
	b.WriteString("&%24.ct=application%2Fjson&%24.ce=utf-8")
	for i := 0; i+1 < len(props); i += 2 {
		b.WriteByte('&')
		b.WriteString(percentEncode(props[i]))
		b.WriteByte('=')
		b.WriteString(percentEncode(props[i+1]))
	}
	b.WriteByte('/')
	return b.String()
}

// MaxTopicLength is the longest topic an MQTT PUBLISH may carry: its
// length is a two-byte prefix.
const MaxTopicLength = 65535

// CheckTopic reports why topic cannot be published: too long, not UTF-8,
// or holding a wildcard or NUL. nil means it can.
func CheckTopic(topic string) error {
	switch {
	case len(topic) > MaxTopicLength:
		return fmt.Errorf("the topic takes %d bytes, more than MQTT's %d", len(topic), MaxTopicLength)
	case !utf8.ValidString(topic):
		return errors.New("the topic is not valid UTF-8")
	case strings.ContainsAny(topic, "+#\x00"):
		return errors.New("the topic holds '+', '#' or NUL, which a PUBLISH topic must not")
	}
	return nil
}

// percentEncode leaves letters, digits and -_.!*() as they are and writes
// every other byte as %XX with upper-case hex, a space included.
func percentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; unreserved(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		}
	}
	return string(b)
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
