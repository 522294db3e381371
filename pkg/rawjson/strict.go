package rawjson

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// ErrSyntax is what ValidStrict returns for input that is not JSON at all.
var ErrSyntax = errors.New("not valid JSON")

// Problem kinds of a StrictError.
const (
	// DuplicateName: an object has two members whose names are equal under
	// Unicode case folding (after escapes are decoded).
	DuplicateName = iota + 1
	// InvalidUTF8: a string holds bytes that are not UTF-8.
	InvalidUTF8
	// LoneSurrogate: a string holds a \u escape of a UTF-16 surrogate that
	// is not part of a pair.
	LoneSurrogate
)

// StrictError describes the first place where a valid JSON document breaks
// a rule of ValidStrict.
type StrictError struct {
	Kind int
	// Offset is the byte offset in the document of the string at fault: for
	// a duplicate, the second name.
	Offset int
	// Element is the index of the top-level array element holding the
	// problem, or 0 when the document is not an array.
	Element int
	// Path leads to the problem from the top-level element (or the document
	// when it is not an array): member names joined by '.', array indexes in
	// brackets, such as data.readings[3].t. For a duplicate it ends with the
	// repeated name; for a bad member name, with the object holding it.
	Path string
	// InName reports that the bad string is a member name.
	InName bool

	rpath []string // Path's segments (".name" or "[i]") in reverse order, while unwinding
}

func (e *StrictError) Error() string {
	switch e.Kind {
	case DuplicateName:
		return "duplicate member name " + strconv.Quote(e.Path)
	case LoneSurrogate:
		return "unpaired UTF-16 surrogate escape at byte offset " + strconv.Itoa(e.Offset)
	}
	return "invalid UTF-8 at byte offset " + strconv.Itoa(e.Offset)
}

// ValidStrict is ValidCount that also holds b to the rules of I-JSON
// (RFC 7493) that make a document read the same by every parser: strings,
// member names included, are valid UTF-8 without unpaired surrogate escapes,
// and no object has two members of the same name. Names are compared after
// decoding escapes and under Unicode case folding, because readers differ on
// which of two such members they keep (most keep the last, this package's
// Member the first, and encoding/json matches struct fields ignoring case).
//
// It returns ErrSyntax when b is not valid JSON (as Valid reports) and a
// *StrictError when b is valid JSON that breaks those rules. It costs one
// pass over b and allocates nothing unless an object has more than a few
// dozen members, a member name has escapes or non-ASCII letters, or it
// fails.
func ValidStrict(b []byte) (elements int, err error) {
	names := namesPool.Get().(*[]memberName)
	v := validator{b: b, strict: true, names: (*names)[:0]}
	i := skipSpace(b, 0)
	i, ok := v.value(i, 0)
	*names = v.names[:0]
	if cap(*names) <= maxPooledNames {
		clear((*names)[:cap(*names)]) // drop the folded names
		namesPool.Put(names)
	}
	if v.issue != nil {
		if !Valid(b) { // the walk stopped at the issue; syntax comes first
			return 0, ErrSyntax
		}
		e := v.issue
		if KindOf(b) == Array {
			e.Element = v.elements
			if len(e.rpath) > 0 {
				e.rpath = e.rpath[:len(e.rpath)-1] // the element's own index
			}
		}
		var sb strings.Builder
		for j := len(e.rpath) - 1; j >= 0; j-- {
			sb.WriteString(e.rpath[j])
		}
		e.Path, e.rpath = strings.TrimPrefix(sb.String(), "."), nil
		return 0, e
	}
	if !ok || skipSpace(b, i) != len(b) {
		return 0, ErrSyntax
	}
	return v.elements, nil
}

// namesPool keeps the member name stacks of ValidStrict between calls, so
// that a call allocates nothing in the common case.
var namesPool = sync.Pool{New: func() any { s := make([]memberName, 0, 64); return &s }}

// maxPooledNames bounds the stacks kept, so that one huge document does not
// pin its memory.
const maxPooledNames = 4096

// memberName is one member name of an object being checked.
type memberName struct {
	start, end int // the name between its quotes in b
	// hash is nameHash of the name decoded and case-folded (see fold):
	// names equal under folding have equal hashes, and names are compared
	// in full only when their hashes are equal. An object's first name is
	// stored with hash 0 and hashed only if a second name comes.
	hash  uint64
	plain bool // ASCII without escapes: folding is upper-casing
}

// mapThreshold is the number of members above which an object's names are
// found by hash in a map rather than by a scan.
const mapThreshold = 32

// strictName records the member name b[start:end] (inside its quotes; plain
// when ASCII without escapes) of the object whose names begin at
// names[base], and fails when an earlier member has the same name. set,
// when not nil, indexes that object's names by hash.
func (v *validator) strictName(base, start, end int, plain bool, set *map[uint64]int) bool {
	n := memberName{start: start, end: end, plain: plain}
	n.hash = v.hash(&n)
	names := v.names[base:]
	if *set == nil && len(names) < mapThreshold {
		for j := range names {
			if names[j].hash == 0 { // the first name, stored unhashed
				names[j].hash = v.hash(&names[j])
			}
			if names[j].hash == n.hash && v.sameName(&names[j], &n) {
				return v.duplicate(&n)
			}
		}
		v.names = append(v.names, n)
		return true
	}
	if *set == nil {
		*set = make(map[uint64]int, 4*mapThreshold)
		for j := range names {
			if names[j].hash == 0 {
				names[j].hash = v.hash(&names[j])
			}
			(*set)[names[j].hash] = base + j
		}
	}
	if j, ok := (*set)[n.hash]; ok {
		if v.sameName(&v.names[j], &n) {
			return v.duplicate(&n)
		}
		// Two names with one hash: rare enough to settle by a scan.
		for j := range names {
			if v.hash(&names[j]) == n.hash && v.sameName(&names[j], &n) {
				return v.duplicate(&n)
			}
		}
	} else {
		(*set)[n.hash] = len(v.names)
	}
	v.names = append(v.names, n)
	return true
}

// hash returns nameHash of n's folded name.
func (v *validator) hash(n *memberName) uint64 {
	if n.plain {
		return nameHash(v.b[n.start:n.end])
	}
	return nameHash([]byte(v.fold(n)))
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// nameHash is FNV-1a over b with bit 0x20 set in every byte: the same for
// ASCII letters in either case, so for a plain name and its folded form.
// Other bytes that differ only in that bit also collide, which the full
// comparison after a hash match sorts out.
func nameHash(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h = (h ^ uint64(c|0x20)) * fnvPrime
	}
	return h
}

func (v *validator) duplicate(n *memberName) bool {
	name := string(v.b[n.start:n.end])
	if !n.plain {
		name, _ = unescape(v.b[n.start:n.end])
	}
	v.issue = &StrictError{Kind: DuplicateName, Offset: n.start - 1, rpath: []string{"." + name}}
	return false
}

// sameName reports whether two member names are equal under case folding.
func (v *validator) sameName(a, c *memberName) bool {
	if a.plain && c.plain {
		x, y := v.b[a.start:a.end], v.b[c.start:c.end]
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] && upperASCII(x[i]) != upperASCII(y[i]) {
				return false
			}
		}
		return true
	}
	return v.fold(a) == v.fold(c)
}

// fold returns n's name decoded and case-folded: every rune replaced by the
// smallest rune of its case-folding orbit, so that two names fold to the
// same string exactly when strings.EqualFold says they are equal.
func (v *validator) fold(n *memberName) string {
	raw := v.b[n.start:n.end]
	s := string(raw)
	if !n.plain {
		s, _ = unescape(raw)
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			out = append(out, upperASCII(byte(r)))
			continue
		}
		out = utf8.AppendRune(out, foldRune(r))
	}
	return string(out)
}

// foldRune returns the smallest rune of r's case-folding orbit.
func foldRune(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return m
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// strictRune checks the multi-byte UTF-8 sequence at b[i] and returns the
// index after it.
func (v *validator) strictRune(i int) (int, bool) {
	r, size := utf8.DecodeRune(v.b[i:])
	if r == utf8.RuneError && size <= 1 {
		v.issue = &StrictError{Kind: InvalidUTF8, Offset: i}
		return i, false
	}
	return i + size, true
}

// strictEscape checks the \u escape whose hex digits are b[i+1:i+5] (b[i]
// is the 'u') and returns the index of its last byte: a high surrogate must
// be followed by a low one, taken with it, and a low one must not stand
// alone.
func (v *validator) strictEscape(i int) (int, bool) {
	u := hex4(v.b[i+1 : i+5])
	switch {
	case u < 0xD800 || u > 0xDFFF:
		return i + 4, true
	case u <= 0xDBFF && len(v.b)-i >= 11 && v.b[i+5] == '\\' && v.b[i+6] == 'u':
		if w := v.b[i+7 : i+11]; isHex(w[0]) && isHex(w[1]) && isHex(w[2]) && isHex(w[3]) {
			if lo := hex4(w); lo >= 0xDC00 && lo <= 0xDFFF {
				return i + 10, true
			}
		}
	}
	v.issue = &StrictError{Kind: LoneSurrogate, Offset: i - 1}
	return i, false
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
