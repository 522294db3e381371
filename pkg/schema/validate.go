package schema

import (
	"strings"
	"unicode/utf8"
	"unsafe"
)

// validTimestamp reports whether s is an RFC 3339 date-time, such as
// 2018-04-05T17:31:00Z or 2018-04-05t17:31:00.123456789+02:00: the date must
// exist, the hour be 00-23, the minute 00-59 and the second 00-60 (a leap
// second); "T" and "Z" may be lower case, as RFC 3339 §5.6 allows.
func validTimestamp(s string) bool {
	// Shortest form: 2006-01-02T15:04:05Z (20 bytes).
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
		s[13] != ':' || s[16] != ':' {
		return false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	second, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || second > 60 {
		return false
	}
	rest := s[19:]
	if rest[0] == '.' {
		j := 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		if j == 1 {
			return false
		}
		rest = rest[j:]
	}
	switch {
	case rest == "Z" || rest == "z":
		return true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		return ok1 && ok2 && oh <= 23 && om <= 59
	}
	return false
}

// digits parses s, which must be all ASCII digits.
func digits(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// validBase64 reports whether s is standard base64 (RFC 4648 §4) with
// padding, the encoding the CloudEvents JSON format names for data_base64.
// Line breaks are not allowed.
func validBase64(s string) bool {
	if len(s)%4 != 0 {
		return false
	}
	pad := 0
	for pad < 2 && pad < len(s) && s[len(s)-1-pad] == '=' {
		pad++
	}
	for i := 0; i < len(s)-pad; i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// validInteger reports whether the JSON number or string s is a CloudEvents
// Integer: the integer component of a JSON number, optionally with a minus
// sign (no fraction, no exponent), from -2147483648 to 2147483647.
func validInteger(s string) bool {
	mag := strings.TrimPrefix(s, "-")
	if mag == "" || len(mag) > 10 || (mag[0] == '0' && len(mag) > 1) {
		return false
	}
	// Ten digits overflow a 32-bit int (the ARM v7 build), so count in int64.
	var n int64
	for i := 0; i < len(mag); i++ {
		c := mag[i]
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int64(c-'0')
	}
	if len(mag) < len(s) {
		return n <= 1<<31
	}
	return n < 1<<31
}

// badStringRune returns the first code point of the valid UTF-8 string s
// that a CloudEvents String must not hold: a control character
// (U+0000-U+001F, U+007F-U+009F) or a Unicode noncharacter (U+FDD0-U+FDEF
// and the last two code points of every plane). Unpaired surrogates cannot
// occur in valid UTF-8.
func badStringRune(s string) (rune, bool) {
	for i := 0; i < len(s); {
		if i+8 <= len(s) && printableASCII8(s, i) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return rune(c), true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r <= 0x9f || 0xfdd0 <= r && r <= 0xfdef || r&0xfffe == 0xfffe {
			return r, true
		}
		i += n
	}
	return 0, false
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// load8 returns the 8 bytes of s from i as one word.
func load8(s string, i int) uint64 {
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// printableASCII8 reports whether the 8 bytes of s from i are all printable
// ASCII (0x20-0x7E), testing them at once.
func printableASCII8(s string, i int) bool {
	x := load8(s, i)
	below := (x - 0x20*ones) &^ x & highs // a byte < 0x20
	above := ((x + ones) | x) & highs     // a byte > 0x7E
	return below|above == 0
}

// plainText returns the value of the JSON string literal v when it is
// printable ASCII without escapes, sharing v's memory as unquote does: such
// a value needs no unescaping and is a valid CloudEvents String. ok is
// false otherwise, and the caller takes the slow path. It makes the common
// case one pass over the literal.
func plainText(v []byte) (s string, ok bool) {
	if !isString(v) {
		return "", false
	}
	inner := unsafe.String(unsafe.SliceData(v[1:]), len(v)-2)
	i := 0
	for ; i+8 <= len(inner); i += 8 {
		y := load8(inner, i) ^ '\\'*ones
		if !printableASCII8(inner, i) || (y-ones)&^y&highs != 0 { // a backslash
			return "", false
		}
	}
	for ; i < len(inner); i++ {
		if c := inner[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return "", false
		}
	}
	return inner, true
}

// isBlank reports whether s is empty or only white space, which receivers
// such as the CloudEvents Go SDK read as empty.
func isBlank(s string) bool {
	if s != "" && s[0] > ' ' && s[0] < utf8.RuneSelf {
		return false // the common case, at no cost
	}
	return strings.TrimSpace(s) == ""
}
