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
	types         []pattern // nil: every event type
	begin, end    *pattern  // nil: not set
	caseSensitive bool      // for begin and end
	conds         []cond
}

// cond is one compiled advanced filter.
type cond struct {
	op   op
	path []string
	// shared is how many leading segments of path the previous cond in
	// Matcher.conds has too, at most cacheDepth: Match resolves those once.
	shared int
	nums   []rawjson.Decimal // number operators
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
	// Conds are sorted by path, and Match stops at the first one that fails,
	// which includes every cond whose key is missing. So when a cond is
	// evaluated, the previous one's path resolved in full and its values
	// along the way are still in cache: a key prefix such as "data" is
	// resolved once, not once per cond.
	var cache [cacheDepth][]byte
	for i := range m.conds {
		c := &m.conds[i]
		v := ev.Body
		if c.shared > 0 {
			v = cache[c.shared-1]
		}
		for d := c.shared; d < len(c.path); d++ {
			var ok bool
			if v, ok = rawjson.Member(v, c.path[d]); !ok {
				return false
			}
			if d < cacheDepth {
				cache[d] = v
			}
		}
		if !c.match(v) {
			return false
		}
	}
	return true
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

func (m *Matcher) matchType(t string) bool {
	for i := range m.types {
		if foldEqual(t, &m.types[i]) {
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
// Whatever the operator, a value of the wrong JSON type does not match.
func (c *cond) match(v []byte) bool {
	v = rawjson.TrimSpace(v)
	switch kind := rawjson.KindOf(v); {
	case c.op.isNumber():
		return kind == rawjson.Number && c.matchNumber(v)
	case c.op == opBoolEquals:
		switch string(v) {
		case "true":
			return c.b
		case "false":
			return !c.b
		}
		return false
	default:
		if kind != rawjson.String || len(v) < 2 {
			return false
		}
		if inner := v[1 : len(v)-1]; bytes.IndexByte(inner, '\\') < 0 {
			return matchString(c, inner)
		}
		s, ok := rawjson.Unquote(v)
		return ok && matchString(c, s)
	}
}

func (c *cond) matchNumber(v []byte) bool {
	switch c.op {
	case opNumberIn, opNumberNotIn:
		in := false
		for _, d := range c.nums {
			cmp, ok := rawjson.CompareToDecimal(v, d)
			if !ok {
				return false
			}
			if cmp == 0 {
				in = true
				break
			}
		}
		return in == (c.op == opNumberIn)
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

// matchString applies a string operator to the decoded string value s.
func matchString[T text](c *cond, s T) bool {
	var hit func(T, *pattern) bool
	switch c.op {
	case opStringIn, opStringNotIn:
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
			return c.op != opStringNotIn
		}
	}
	return c.op == opStringNotIn
}
