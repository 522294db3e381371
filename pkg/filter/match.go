package filter

import (
	"bytes"
	"slices"
	"strings"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

// Matcher is a compiled filter. It is immutable, so one Matcher is safe for
// concurrent use by any number of goroutines. The nil *Matcher matches every
// event.
type Matcher struct {
	types         map[uint64][]pattern // included event types by foldHash; nil: every event type
	begin, end    *pattern             // nil: not set
	caseSensitive bool                 // for begin and end
	conds         []cond
}

// cond is one compiled advanced filter.
type cond struct {
	// op is the operator, or for a negated one (StringNotIn, …) the one it
	// negates, with neg set.
	op  op
	fam family
	neg bool
	// missing is the result when the key is not in the event.
	missing bool
	// arrays: an array value matches when any element does (for a negated
	// operator, when none does); otherwise arrays never match.
	arrays bool
	path   []string
	// shared is how many leading segments of path the previous cond in
	// Matcher.conds has too, at most cacheDepth: Match resolves those once.
	shared int
	nums   []rawjson.Decimal // number operators; [low, high] pairs for ranges
	b      bool              // BoolEquals
	strs   []pattern         // string operators
}

// Match reports whether ev passes every part of the filter. ev must not be
// nil and ev.Body must be valid JSON, as the publish path guarantees; on
// anything else Match returns a wrong answer but never panics. Match does not
// allocate, except to decode JSON escapes in a compared string value or in an
// object key it has to compare.
func (m *Matcher) Match(ev *eventgrid.Event) bool {
	if m == nil {
		return true
	}
	if m.types != nil && !m.matchType(ev.Type) {
		return false
	}
	if (m.begin != nil || m.end != nil) && !m.matchSubject(ev) {
		return false
	}
	// Conds are sorted by path, so conds sharing a key prefix such as
	// "data" are adjacent, and cache keeps the values the previous cond's
	// path resolved to: a prefix is resolved once, not once per cond.
	// resolved is how many levels of cache hold the previous path's values
	// (fewer when its key was missing).
	var cache [cacheDepth][]byte
	resolved := 0
conds:
	for i := range m.conds {
		c := &m.conds[i]
		start := min(c.shared, resolved)
		v := ev.Body
		if start > 0 {
			v = cache[start-1]
		}
		for d := start; d < len(c.path); d++ {
			var ok bool
			if v, ok = rawjson.Member(v, c.path[d]); !ok {
				resolved = min(d, cacheDepth)
				if !c.missing {
					return false
				}
				continue conds
			}
			if d < cacheDepth {
				cache[d] = v
			}
		}
		resolved = min(len(c.path), cacheDepth)
		if !c.match(v) {
			return false
		}
	}
	return true
}

// ReadsBody reports whether Match reads ev.Body, which it does for
// advanced filters only: the event type and subject filters read the
// Event's fields.
func (m *Matcher) ReadsBody() bool {
	return m != nil && len(m.conds) > 0
}

// cacheDepth is how many levels of key paths Match remembers between
// conds.
const cacheDepth = 8

// sortConds orders conds by path, so that conds sharing a key prefix are
// adjacent, and records how much of each path its predecessor shares. The
// order of evaluation does not change the result: all conds are ANDed.
func sortConds(conds []cond) {
	slices.SortStableFunc(conds, func(a, b cond) int { return slices.Compare(a.path, b.path) })
	for i := 1; i < len(conds); i++ {
		prev, cur := conds[i-1].path, conds[i].path
		n := 0
		for n < len(prev) && n < len(cur) && n < cacheDepth && prev[n] == cur[n] {
			n++
		}
		conds[i].shared = n
	}
}

// matchType looks the event type up among the included ones by its
// folded hash, in constant time however many there are, and without
// allocating.
func (m *Matcher) matchType(t string) bool {
	ps := m.types[foldHash(t)]
	for i := range ps {
		if foldEqual(t, &ps[i]) {
			return true
		}
	}
	return false
}

func (m *Matcher) matchSubject(ev *eventgrid.Event) bool {
	if !ev.HasSubject {
		return false
	}
	s := ev.Subject
	if m.caseSensitive {
		return (m.begin == nil || strings.HasPrefix(s, m.begin.orig)) &&
			(m.end == nil || strings.HasSuffix(s, m.end.orig))
	}
	return (m.begin == nil || foldHasPrefix(s, m.begin)) &&
		(m.end == nil || foldHasSuffix(s, m.end))
}

// match evaluates the advanced filter on v, the value found at its key.
// Whatever the operator, a value of the wrong JSON type does not match; an
// array matches only with arrays enabled, when any of its elements matches
// (for a negated operator, when none does).
func (c *cond) match(v []byte) bool {
	v = rawjson.TrimSpace(v)
	kind := rawjson.KindOf(v)
	if c.fam == famNull {
		if kind == rawjson.Array && !c.arrays {
			return false
		}
		return (kind == rawjson.Null) == (c.op == opIsNullOrUndefined)
	}
	if kind == rawjson.Array {
		if !c.arrays {
			return false
		}
		hit := false
		rawjson.ArrayEach(v, func(_ int, e []byte) bool {
			e = rawjson.TrimSpace(e)
			hit = c.matchBase(e, rawjson.KindOf(e))
			return !hit
		})
		return hit != c.neg
	}
	if !c.typeOK(kind) {
		return false
	}
	return c.matchBase(v, kind) != c.neg
}

// typeOK reports whether a value of kind is one the operator compares.
func (c *cond) typeOK(kind rawjson.Kind) bool {
	switch c.fam {
	case famNumber, famRange:
		return kind == rawjson.Number
	case famBool:
		return kind == rawjson.Bool
	}
	return kind == rawjson.String
}

// matchBase evaluates the operator, not negated, on a value of kind; a value
// of the wrong type does not match.
func (c *cond) matchBase(v []byte, kind rawjson.Kind) bool {
	if !c.typeOK(kind) {
		return false
	}
	switch c.fam {
	case famNumber:
		return c.matchNumber(v)
	case famRange:
		for i := 0; i+1 < len(c.nums); i += 2 {
			lo, ok1 := rawjson.CompareToDecimal(v, c.nums[i])
			hi, ok2 := rawjson.CompareToDecimal(v, c.nums[i+1])
			if ok1 && ok2 && lo >= 0 && hi <= 0 {
				return true
			}
		}
		return false
	case famBool:
		return (v[0] == 't') == c.b
	}
	if len(v) < 2 {
		return false
	}
	if inner := v[1 : len(v)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return matchString(c, inner)
	}
	s, ok := rawjson.Unquote(v)
	return ok && matchString(c, s)
}

func (c *cond) matchNumber(v []byte) bool {
	if c.op == opNumberIn {
		for _, d := range c.nums {
			if cmp, ok := rawjson.CompareToDecimal(v, d); ok && cmp == 0 {
				return true
			}
		}
		return false
	}
	cmp, ok := rawjson.CompareToDecimal(v, c.nums[0])
	if !ok {
		return false
	}
	switch c.op {
	case opNumberGreaterThan:
		return cmp > 0
	case opNumberGreaterThanOrEquals:
		return cmp >= 0
	case opNumberLessThan:
		return cmp < 0
	default: // opNumberLessThanOrEquals
		return cmp <= 0
	}
}

// matchString applies a string operator, not negated, to the decoded string
// value s: whether it equals, begins with, ends with or contains one of the
// values.
func matchString[T text](c *cond, s T) bool {
	var hit func(T, *pattern) bool
	switch c.op {
	case opStringIn:
		hit = foldEqual[T]
	case opStringBeginsWith:
		hit = foldHasPrefix[T]
	case opStringEndsWith:
		hit = foldHasSuffix[T]
	default: // opStringContains
		hit = foldContains[T]
	}
	for i := range c.strs {
		if hit(s, &c.strs[i]) {
			return true
		}
	}
	return false
}
