package filter

import (
	"unicode"
	"unicode/utf8"
)

// Case-insensitive text search under Unicode simple case folding, the
// equivalence strings.EqualFold uses. Each rune is mapped to the smallest
// rune of its folding orbit (its "fold key"): two runes are equal under
// folding exactly when their keys are. Patterns are folded once at Compile;
// the event side is folded rune by rune as it is read, so nothing allocates.

// text is what the search functions read: an event value still in its JSON
// bytes, or a Go string such as the subject.
type text interface{ ~string | ~[]byte }

// asciiKey holds the fold key of every ASCII rune. The smallest rune of an
// ASCII letter's orbit is its upper-case form.
var asciiKey = func() (t [utf8.RuneSelf]rune) {
	for i := range t {
		t[i] = rune(i)
		if 'a' <= i && i <= 'z' {
			t[i] -= 'a' - 'A'
		}
	}
	return t
}()

func foldKey(r rune) rune {
	if r < utf8.RuneSelf {
		return asciiKey[r]
	}
	k := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		k = min(k, f)
	}
	return k
}

// decodeAt returns the fold key of the rune starting at s[i] and its width.
func decodeAt[T text](s T, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiKey[c], 1
	}
	var b [utf8.UTFMax]byte
	n := copy(b[:], s[i:])
	r, w := utf8.DecodeRune(b[:n])
	return foldKey(r), w
}

// decodeBefore returns the fold key of the rune ending at s[j] and its width.
func decodeBefore[T text](s T, j int) (rune, int) {
	if c := s[j-1]; c < utf8.RuneSelf {
		return asciiKey[c], 1
	}
	var b [utf8.UTFMax]byte
	n := copy(b[:], s[max(0, j-utf8.UTFMax):j])
	r, w := utf8.DecodeLastRune(b[:n])
	return foldKey(r), w
}

// pattern is a string folded for searching, plus what Rabin-Karp needs.
type pattern struct {
	orig string
	keys []rune // fold key of every rune
	hash uint64 // rolling hash of keys
	pow  uint64 // hashBase^(len(keys)-1)
}

const hashBase = 1099511628211 // the 64-bit FNV prime: odd, spreads well

func newPattern(s string) pattern {
	p := pattern{orig: s, pow: 1}
	for i, r := range []rune(s) {
		p.keys = append(p.keys, foldKey(r))
		p.hash = p.hash*hashBase + uint64(p.keys[len(p.keys)-1])
		if i > 0 {
			p.pow *= hashBase
		}
	}
	return p
}

// foldEqual reports whether s equals p under case folding.
func foldEqual[T text](s T, p *pattern) bool {
	if len(s) < len(p.keys) || len(s) > utf8.UTFMax*len(p.keys) {
		return false
	}
	i, ok := foldPrefixLen(s, p)
	return ok && i == len(s)
}

// foldPrefixLen reports whether s begins with p under case folding and, if
// so, how many bytes of s the match covers.
func foldPrefixLen[T text](s T, p *pattern) (int, bool) {
	i := 0
	for _, k := range p.keys {
		if i >= len(s) {
			return 0, false
		}
		r, w := decodeAt(s, i)
		if r != k {
			return 0, false
		}
		i += w
	}
	return i, true
}

func foldHasPrefix[T text](s T, p *pattern) bool {
	_, ok := foldPrefixLen(s, p)
	return ok
}

func foldHasSuffix[T text](s T, p *pattern) bool {
	j := len(s)
	for k := len(p.keys) - 1; k >= 0; k-- {
		if j <= 0 {
			return false
		}
		r, w := decodeBefore(s, j)
		if r != p.keys[k] {
			return false
		}
		j -= w
	}
	return true
}

// foldContains reports whether p occurs in s under case folding. It runs
// Rabin-Karp over the fold keys, so a long event value costs time linear in
// its length whatever the pattern.
func foldContains[T text](s T, p *pattern) bool {
	m := len(p.keys)
	if m == 0 {
		return true
	}
	if len(s) < m {
		return false
	}
	// Hash the first m runes: the window is s[lo:hi].
	var h uint64
	lo, hi := 0, 0
	for range m {
		if hi >= len(s) {
			return false
		}
		r, w := decodeAt(s, hi)
		h = h*hashBase + uint64(r)
		hi += w
	}
	for {
		if h == p.hash && foldHasPrefix(s[lo:], p) {
			return true
		}
		if hi >= len(s) {
			return false
		}
		out, wo := decodeAt(s, lo)
		in, wi := decodeAt(s, hi)
		h = (h-uint64(out)*p.pow)*hashBase + uint64(in)
		lo += wo
		hi += wi
	}
}

// foldHash is a 64-bit FNV-1a hash of s's fold keys: strings equal under
// folding have the same hash.
func foldHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); {
		r, w := decodeAt(s, i)
		h = (h ^ uint64(r)) * 1099511628211
		i += w
	}
	return h
}
