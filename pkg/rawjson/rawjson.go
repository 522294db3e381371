package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Kind is the type of a JSON value.
type Kind uint8

// The kinds of JSON values.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Object
	Array
)

// KindOf returns the kind of the value v, judged by its first byte after
// leading space.
func KindOf(v []byte) Kind {
	i := skipSpace(v, 0)
	if i >= len(v) {
		return Invalid
	}
	switch c := v[i]; {
	case c == 'n':
		return Null
	case c == 't' || c == 'f':
		return Bool
	case c == '"':
		return String
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '-' || (c >= '0' && c <= '9'):
		return Number
	}
	return Invalid
}

// TrimSpace returns v without leading and trailing JSON white space.
func TrimSpace(v []byte) []byte {
	i := skipSpace(v, 0)
	j := len(v)
	for j > i && isSpace(v[j-1]) {
		j--
	}
	return v[i:j]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// valueEnd returns the index just past the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = StringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return len(b)
	}
}

// StringEnd returns the index just past the JSON string literal that starts
// at b[i] (its opening quote), or len(b) when the literal does not end.
// Most literals, names and short values, end within a few bytes, found
// byte by byte; in a longer one each quote is looked for with
// bytes.IndexByte, which reads many bytes at a time, and the first one
// after an even run of backslashes ends it (each backslash of the literal
// escapes the byte after it).
func StringEnd(b []byte, i int) int {
	short := min(len(b), i+17)
	for i++; i < short; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			break
		}
		q := i + j
		k := q - 1
		for k >= i && b[k] == '\\' {
			k--
		}
		if (q-1-k)%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return len(b)
}

// ObjectEach calls fn for each member of the object obj, in order, with the
// member's key as written between its quotes (escapes not decoded) and its
// value with surrounding space removed. It stops when fn returns false and
// reports whether obj is an object.
func ObjectEach(obj []byte, fn func(key, value []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return true
		}
		if obj[i] == ',' {
			i++
			continue
		}
		if obj[i] != '"' {
			return true
		}
		ke := StringEnd(obj, i)
		key := obj[i+1 : max(i+1, ke-1)]
		i = skipSpace(obj, ke)
		if i < len(obj) && obj[i] == ':' {
			i++
		}
		i = skipSpace(obj, i)
		ve := valueEnd(obj, i)
		if !fn(key, obj[i:ve]) {
			return true
		}
		i = ve
	}
}

// ArrayEach calls fn for each element of the array arr, in order, with the
// element's index and its value with surrounding space removed. It stops when
// fn returns false and reports whether arr is an array.
func ArrayEach(arr []byte, fn func(i int, value []byte) bool) bool {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i++
	for n := 0; ; n++ {
		i = skipSpace(arr, i)
		if i < len(arr) && arr[i] == ',' {
			i = skipSpace(arr, i+1)
		}
		if i >= len(arr) || arr[i] == ']' {
			return true
		}
		ve := valueEnd(arr, i)
		if ve == i { // not a value: stop rather than loop
			return true
		}
		if !fn(n, arr[i:ve]) {
			return true
		}
		i = ve
	}
}

// Member returns the value of the member of obj named name. An exact match of
// the key wins; otherwise the first key equal to name under Unicode case
// folding is used.
func Member(obj []byte, name string) (value []byte, ok bool) {
	var folded []byte
	foundFolded := false
	ObjectEach(obj, func(k, v []byte) bool {
		if KeyEqual(k, name) {
			value, ok = v, true
			return false
		}
		if !foundFolded && KeyEqualFold(k, name) {
			folded, foundFolded = v, true
		}
		return true
	})
	if ok {
		return value, true
	}
	return folded, foundFolded
}

// Lookup follows path through nested objects of doc, matching each segment
// as Member does, and returns the value found.
func Lookup(doc []byte, path []string) ([]byte, bool) {
	v := doc
	for _, seg := range path {
		var ok bool
		if v, ok = Member(v, seg); !ok {
			return nil, false
		}
	}
	return v, true
}

// KeyEqual reports whether the raw key k (as ObjectEach gives it) is name.
func KeyEqual(k []byte, name string) bool {
	if !hasEscape(k) {
		return string(k) == name
	}
	s, ok := unescape(k)
	return ok && s == name
}

// KeyEqualFold reports whether the raw key k equals name under Unicode case
// folding.
func KeyEqualFold(k []byte, name string) bool {
	if !hasEscape(k) {
		return equalFold(k, name)
	}
	s, ok := unescape(k)
	return ok && equalFold([]byte(s), name)
}

// equalFold is strings.EqualFold without converting k to a string.
func equalFold(k []byte, s string) bool {
	// Fast path for ASCII, which is what keys almost always are.
	if len(k) == len(s) {
		ascii := true
		for i := 0; i < len(k); i++ {
			a, b := k[i], s[i]
			if a >= utf8.RuneSelf || b >= utf8.RuneSelf {
				ascii = false
				break
			}
			if a == b {
				continue
			}
			if 'A' <= a && a <= 'Z' {
				a += 'a' - 'A'
			}
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			if a != b {
				return false
			}
		}
		if ascii {
			return true
		}
	}
	return strings.EqualFold(string(k), s)
}

func hasEscape(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

func unescape(inner []byte) (string, bool) {
	q := make([]byte, 0, len(inner)+2)
	q = append(q, '"')
	q = append(q, inner...)
	q = append(q, '"')
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return "", false
	}
	return s, true
}

// Unquote returns the string value of the string literal v (quotes
// included). ok is false if v is not a string.
func Unquote(v []byte) (s string, ok bool) {
	v = TrimSpace(v)
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	inner := v[1 : len(v)-1]
	if !hasEscape(inner) {
		return string(inner), true
	}
	return unescape(inner)
}
