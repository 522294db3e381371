package rawjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SyntaxError says where a text stops being JSON and what JSON allows
// there. Every reader of a body or a declaration reports its mistakes with
// it, so that a JSON mistake gets the same answer wherever it is made.
type SyntaxError struct {
	// Line and Column, both from 1 (columns count characters), locate the
	// character at fault; for a text that ends too soon, its last one.
	Line, Column int
	// Offset is the byte offset of the character at fault, or the text's
	// length when it ended too soon.
	Offset int
	// Msg is encoding/json's account of the mistake, such as "invalid
	// character '}' looking for beginning of object key string".
	Msg string
	// Expected says what JSON allows there, and how to write what was
	// probably meant; empty when Msg says it already.
	Expected string
}

// Error returns "line 3, column 14: <Msg>; expected <Expected>".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Explain())
}

// Explain is Error without the position: Msg, and what was expected.
func (e *SyntaxError) Explain() string {
	if e.Expected == "" {
		return e.Msg
	}
	return e.Msg + "; expected " + e.Expected
}

// Locate returns where and why doc is not one JSON value, or nil when it
// is one. It reads doc again with encoding/json, so it belongs on the path
// of a refusal, never on the path of every request.
func Locate(doc []byte) *SyntaxError {
	var v json.RawMessage
	err := json.Unmarshal(doc, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return nil
	}
	// Offset counts the bytes read, the bad one included; the position is
	// that of the bad byte, or of the last one when the text ended.
	at := int(max(0, min(se.Offset-1, int64(len(doc)))))
	line, col := position(doc, at)
	off := at
	ended := strings.HasPrefix(se.Error(), "unexpected end")
	if ended {
		off = len(doc)
	}
	return &SyntaxError{Line: line, Column: col, Offset: off, Msg: se.Error(), Expected: expected(doc, at, se.Error(), ended)}
}

// position returns the line and column, both from 1, of doc[at]. Columns
// count characters.
func position(doc []byte, at int) (line, col int) {
	before := doc[:at]
	start := 0
	for i, c := range before {
		if c == '\n' {
			line++
			start = i + 1
		}
	}
	return line + 1, utf8.RuneCount(before[start:]) + 1
}

// expected says what JSON allows at doc[at], where encoding/json stopped
// with msg, and how to write the likely intent of a common mistake.
func expected(doc []byte, at int, msg string, ended bool) string {
	if ended {
		return "more: the text ends before its value does (a closing '}', ']' or '\"' may be missing)"
	}
	if at >= len(doc) {
		return ""
	}
	c := doc[at]
	prev := byte(0)
	if i := lastNonSpace(doc, at); i >= 0 {
		prev = doc[i]
	}
	switch {
	case strings.HasSuffix(msg, "looking for beginning of object key string"):
		if c == '}' && prev == ',' {
			return "a member name in double quotes: remove the comma before '}', which JSON does not allow after the last member"
		}
		if c == '\'' {
			return "a member name in double quotes (\"name\"), not single quotes"
		}
		return "a member name in double quotes"
	case strings.HasSuffix(msg, "looking for beginning of value"):
		switch {
		case c == ']' && prev == ',':
			return "a value: remove the comma before ']', which JSON does not allow after the last element"
		case c == '\'':
			return "a value; strings take double quotes (\"text\"), not single quotes"
		case c == '/':
			return "a value; JSON has no comments"
		case at+1 < len(doc) && isDigit(doc[at+1]) && !isDigit(c) && c != '-':
			return fmt.Sprintf("a value; a number is written with digits only, without %q: %s", c, leadingNumber(doc[at+1:]))
		}
		return "a value: a string in double quotes, a number, an object, an array, true, false or null"
	case strings.HasSuffix(msg, "after object key"):
		return "':' between the member name and its value"
	case strings.HasSuffix(msg, "after object key:value pair"):
		return "',' before the next member, or '}' after the last"
	case strings.HasSuffix(msg, "after array element"):
		return "',' before the next element, or ']' after the last"
	case strings.HasSuffix(msg, "after top-level value"):
		return "the end of the text: it holds one JSON value, and more after it"
	case strings.HasSuffix(msg, "in string literal"):
		return "no control character inside a string: write it escaped, such as \\n or \\t"
	case strings.HasSuffix(msg, "in string escape code"):
		return "one of the escapes \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX after the backslash"
	case strings.Contains(msg, "numeric literal"), strings.Contains(msg, "after decimal point"), strings.Contains(msg, "in exponent"):
		return "a digit"
	}
	return ""
}

// lastNonSpace returns the index of the last byte before at that is not
// white space, or -1.
func lastNonSpace(b []byte, at int) int {
	for i := at - 1; i >= 0; i-- {
		if !isSpace(b[i]) {
			return i
		}
	}
	return -1
}

// leadingNumber returns the digits, point and exponent that b starts with,
// at most 32 bytes of them.
func leadingNumber(b []byte) string {
	n := 0
	for n < len(b) && n < 32 && (isDigit(b[n]) || b[n] == '.' || b[n] == 'e' || b[n] == 'E' || b[n] == '+' || b[n] == '-') {
		n++
	}
	return string(b[:n])
}
