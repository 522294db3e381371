package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// The answers that carry events the broker holds (a peek, the given-up
// list) are written as they are read: each event's JSON goes from the
// memory that holds it to the connection, compacted and HTML-escaped on
// the way as c.JSON writes a json.RawMessage, so that an answer takes no
// memory of its own beyond the connection's buffer however many events it
// carries, and concurrent inspections cannot make the broker hold copies
// of what it holds already (docs/console.md#what-inspection-holds). The
// bytes are those c.JSON writes; with ?pretty each item is indented on its
// own, taking the memory of one item.

// listWriter writes the JSON object {"<name>":[item,…],<trailer>} of a
// listing answer. The first error ends the writing: the answer has begun,
// and a client that went away is not written to any more.
type listWriter struct {
	w      io.Writer
	pretty bool
	items  int
	err    error
}

// startList writes the answer's status and headers and the list's opening.
func startList(c echo.Context, name string) *listWriter {
	pretty := c.Echo().Debug
	if !pretty && strings.Contains(c.Request().URL.RawQuery, "pretty") {
		_, pretty = c.QueryParams()["pretty"]
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	res.WriteHeader(http.StatusOK)
	l := &listWriter{w: res, pretty: pretty}
	if pretty {
		l.writeString("{\n  " + strconv.Quote(name) + ": [")
	} else {
		l.writeString("{" + strconv.Quote(name) + ":[")
	}
	return l
}

// next starts the next item, and reports whether to write it: false once
// the writing failed.
func (l *listWriter) next() bool {
	if l.err != nil {
		return false
	}
	if l.items > 0 {
		l.writeString(",")
	}
	l.items++
	if l.pretty {
		l.writeString("\n    ")
	}
	return l.err == nil
}

func (l *listWriter) writeString(s string) {
	if l.err == nil {
		_, l.err = io.WriteString(l.w, s)
	}
}

func (l *listWriter) writeBytes(b []byte) {
	if l.err == nil && len(b) > 0 {
		_, l.err = l.w.Write(b)
	}
}

// writeJSON writes v encoded, as a member of an item: a small value.
func (l *listWriter) writeJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil && l.err == nil {
		l.err = err
	}
	l.writeBytes(b)
}

// writeIndented writes the item v indented (?pretty): v encoded whole,
// its events included.
func (l *listWriter) writeIndented(v any) {
	b, err := json.MarshalIndent(v, "    ", "  ")
	if err != nil && l.err == nil {
		l.err = err
	}
	l.writeBytes(b)
}

// end closes the list and writes the answer's other members, each
// `"name":value` (see member), then the newline json.Encoder ends with. It
// returns the first error of the writing.
func (l *listWriter) end(members ...string) error {
	if l.pretty {
		if l.items > 0 {
			l.writeString("\n  ")
		}
		l.writeString("]")
		for _, m := range members {
			l.writeString(",\n  " + strings.Replace(m, ":", ": ", 1))
		}
		l.writeString("\n}\n")
		return l.err
	}
	l.writeString("]")
	for _, m := range members {
		l.writeString("," + m)
	}
	l.writeString("}\n")
	return l.err
}

// member is one member of a list's trailer, for end: "name":value.
func member(name string, value any) string {
	b, _ := json.Marshal(value)
	return strconv.Quote(name) + ":" + string(b)
}

// writeCompact writes src, valid JSON, without its insignificant
// whitespace and with <, >, &, U+2028 and U+2029 escaped, as encoding/json
// writes a json.RawMessage; the runs of bytes that need neither are
// written straight from src.
func (l *listWriter) writeCompact(src []byte) {
	if len(src) == 0 {
		l.writeString("null") // as a nil json.RawMessage
		return
	}
	start := 0
	inString, escaped := false, false
	flush := func(i int) {
		if start < i {
			l.writeBytes(src[start:i])
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if !inString {
			switch c {
			case '"':
				inString = true
			case ' ', '\t', '\n', '\r':
				flush(i)
				start = i + 1
			}
			continue
		}
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c == '<' || c == '>' || c == '&':
			flush(i)
			l.writeString(`\u00` + hexDigit[c>>4:c>>4+1] + hexDigit[c&0xF:c&0xF+1])
			start = i + 1
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			flush(i)
			l.writeString(`\u202` + hexDigit[src[i+2]&0xF:src[i+2]&0xF+1])
			i += 2
			start = i + 1
		}
	}
	flush(len(src))
}

const hexDigit = "0123456789abcdef"
