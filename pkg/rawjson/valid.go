package rawjson

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// maxDepth is the deepest nesting Valid accepts, the same limit as
// encoding/json, so that the two agree on every input.
const maxDepth = 10000

// Valid reports whether b is exactly one JSON value, with optional white
// space around it. It agrees with encoding/json.Valid on every input
// (string contents are not checked for valid UTF-8, as there) but is several
// times faster, which matters on the publish path where every body is
// checked once before it is walked in place.
func Valid(b []byte) bool {
	_, ok := ValidCount(b)
	return ok
}

// ValidCount is Valid that also returns, when b is an array, how many
// elements it has (0 otherwise), so that a caller can size what it
// allocates for them.
func ValidCount(b []byte) (elements int, ok bool) {
	v := validator{b: b}
	i := skipSpace(b, 0)
	i, ok = v.value(i, 0)
	if !ok || skipSpace(b, i) != len(b) {
		return 0, false
	}
	return v.elements, true
}

type validator struct {
	b        []byte
	elements int // elements of the top-level array

	// strict turns on the checks of ValidStrict; issue is the first
	// problem they found, and names the member names of the objects being
	// checked, innermost last.
	strict bool
	issue  *StrictError
	names  []memberName
	// special reports that the last string str checked had an escape or,
	// in strict mode, a non-ASCII byte.
	special bool
}

// value checks the value starting at b[i] and returns the index after it.
func (v *validator) value(i, depth int) (int, bool) {
	b := v.b
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return v.str(i)
	case c == '{':
		return v.object(i, depth+1)
	case c == '[':
		return v.array(i, depth+1)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return number(b, i)
	}
	return i, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i, true
}

// str checks the string literal starting at b[i].
func (v *validator) str(i int) (int, bool) {
	b := v.b
	plain := &plainLax
	if v.strict {
		plain = &plainStrict
	}
	v.special = false
	for i++; i < len(b); i++ {
		// Most strings end within a few bytes; past those, eight plain
		// ASCII bytes are passed over at a time.
		short := min(len(b), i+16)
		for i < short && plain[b[i]] {
			i++
		}
		if i == short {
			for i+8 <= len(b) && plainASCII8(binary.LittleEndian.Uint64(b[i:])) {
				i += 8
			}
			for i < len(b) && plain[b[i]] {
				i++
			}
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			v.special = true
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return i, false
				}
				if !v.strict {
					i += 4
				} else if j, ok := v.strictEscape(i); ok {
					i = j
				} else {
					return i, false
				}
			default:
				return i, false
			}
		case c >= utf8.RuneSelf: // only in strict mode, where such bytes are not plain
			v.special = true
			j, ok := v.strictRune(i)
			if !ok {
				return i, false
			}
			i = j - 1
		}
	}
	return i, false
}

// plainLax and plainStrict mark the bytes a string literal's scan passes
// over without a second look: all but the quote, the backslash and control
// characters, and in strict mode also the bytes of multi-byte UTF-8, whose
// validity is checked.
var plainLax, plainStrict = func() (lax, strict [256]bool) {
	for c := 0x20; c < 256; c++ {
		lax[c] = c != '"' && c != '\\'
		strict[c] = lax[c] && c < utf8.RuneSelf
	}
	return lax, strict
}()

// plainASCII8 reports whether all eight bytes of x are plain in both modes:
// ASCII, no control character, no quote, no backslash. It tests all eight
// at once (https://graphics.stanford.edu/~seander/bithacks.html#ZeroInWord):
// each test below sets a byte's high bit for every byte it is looking for,
// and never when there is none.
func plainASCII8(x uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	control := (x - 0x20*ones) & ^x & highs // a byte below 0x20
	quote := zero(x ^ '"'*ones)
	backslash := zero(x ^ '\\'*ones)
	return (x&highs)|control|quote|backslash == 0
}

func isHex(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }

func (v *validator) object(i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	b := v.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	// The member names of this object are v.names[base:]; set indexes them
	// once there are many.
	base := len(v.names)
	var set map[uint64]int
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		ks := i
		var ok bool
		if i, ok = v.str(i); !ok {
			if v.issue != nil {
				v.issue.InName = true
			}
			return i, false
		}
		ke := i - 1
		switch {
		case !v.strict:
		case len(v.names) == base: // the first name: nothing to compare with yet
			v.names = append(v.names, memberName{start: ks + 1, end: ke, plain: !v.special})
		case !v.strictName(base, ks+1, ke, !v.special, &set):
			return i, false
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = skipSpace(b, i+1)
		if i, ok = v.value(i, depth); !ok {
			if v.issue != nil {
				v.issue.rpath = append(v.issue.rpath, "."+v.nameAt(ks+1, ke))
			}
			return i, false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			v.names = v.names[:base]
			return i + 1, true
		default:
			return i, false
		}
	}
}

// nameAt returns the member name b[start:end] (inside its quotes), decoded.
func (v *validator) nameAt(start, end int) string {
	if s, ok := unescape(v.b[start:end]); ok {
		return s
	}
	return string(v.b[start:end])
}

func (v *validator) array(i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	b := v.b
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for n := 0; ; n++ {
		var ok bool
		if i, ok = v.value(i, depth); !ok {
			if v.issue != nil {
				v.issue.rpath = append(v.issue.rpath, "["+strconv.Itoa(n)+"]")
			}
			return i, false
		}
		if depth == 1 {
			v.elements++
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}
