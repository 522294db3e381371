package mqtttopic

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ModuleOutput returns the MQTT topic of a module message on output, with the
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
func ModuleOutput(deviceID, moduleID, output string, props ...string) string {
	var b strings.Builder
	b.Grow(96 + len(deviceID) + len(moduleID) + len(output))
	b.WriteString("devices/")
	b.WriteString(deviceID)
	b.WriteString("/modules/")
	b.WriteString(moduleID)
	b.WriteString("/messages/events/%24.on=")
	b.WriteString(PercentEncode(output))
	b.WriteString("&%24.ct=application%2Fjson&%24.ce=utf-8")
	for i := 0; i+1 < len(props); i += 2 {
		b.WriteByte('&')
		b.WriteString(PercentEncode(props[i]))
		b.WriteByte('=')
		b.WriteString(PercentEncode(props[i+1]))
	}
	b.WriteByte('/')
	return b.String()
}

// MaxLength is the longest topic an MQTT PUBLISH may carry: its
// length is a two-byte prefix.
const MaxLength = 65535

// Check reports why topic cannot be published: too long, not UTF-8,
// or holding a wildcard or NUL. nil means it can.
func Check(topic string) error {
	switch {
	case len(topic) > MaxLength:
		return fmt.Errorf("the topic takes %d bytes, more than MQTT's %d", len(topic), MaxLength)
	case !utf8.ValidString(topic):
		return errors.New("the topic is not valid UTF-8")
	case strings.ContainsAny(topic, "+#\x00"):
		return errors.New("the topic holds '+', '#' or NUL, which a PUBLISH topic must not")
	}
	return nil
}

// PercentEncode leaves letters, digits and -_.!*() as they are and writes
// every other byte as %XX with upper-case hex, a space included.
func PercentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !Unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; Unreserved(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		}
	}
	return string(b)
}

// Unreserved reports whether c stays as it is under percent-encoding:
// letters, digits and -_.!*(), as .NET's WebUtility.UrlEncode leaves them.
func Unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '!' || c == '*' || c == '(' || c == ')'
}
