package rawjson

// CompareToDecimal compares the JSON number literal v with d exactly and
// returns -1, 0 or +1 as v is less than, equal to or greater than d. ok is
// false if v is not a JSON number. Unlike ParseDecimal it never allocates,
// which makes it the right call on a hot path where d was parsed in advance.
func CompareToDecimal(v []byte, d Decimal) (c int, ok bool) {
	neg, intPart, frac, exp, ok := splitNumber(TrimSpace(v))
	if !ok {
		return 0, false
	}
	// The literal's significant digits are intPart followed by frac, without
	// leading and trailing zeros: the half-open range [lo, hi) of that
	// concatenation.
	n := len(intPart) + len(frac)
	digit := func(i int) byte {
		if i < len(intPart) {
			return intPart[i]
		}
		return frac[i-len(intPart)]
	}
	lo := 0
	for lo < n && digit(lo) == '0' {
		lo++
	}
	hi := n
	for hi > lo && digit(hi-1) == '0' {
		hi--
	}
	var sign int8
	if hi > lo {
		sign = 1
		if neg {
			sign = -1
		}
	}
	if sign != d.Sign {
		if sign < d.Sign {
			return -1, true
		}
		return 1, true
	}
	if sign == 0 {
		return 0, true
	}
	c = 0
	if e := satAdd(int64(len(intPart)-lo), exp); e != d.Exp {
		c = 1
		if e < d.Exp {
			c = -1
		}
	} else {
		c = compareDigits(hi-lo, func(i int) byte { return digit(lo + i) }, d.Digits)
	}
	return int(sign) * c, true
}

// compareDigits compares the digit string of length n given by at with s,
// lexicographically, as compareMagnitude does for two Decimals.
func compareDigits(n int, at func(int) byte, s string) int {
	for i := 0; i < n && i < len(s); i++ {
		if a, b := at(i), s[i]; a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	switch {
	case n < len(s):
		return -1
	case n > len(s):
		return 1
	}
	return 0
}

const hexDigits = "0123456789abcdef"

// StringLen is len(AppendString(nil, s)), found without writing it.
func StringLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 0x20 && c != '"' && c != '\\':
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		default:
			n += 5
		}
	}
	return n
}

// AppendString appends s to dst as a JSON string literal, escaping quotes,
// backslashes and control characters. Other bytes, including non-ASCII
// UTF-8, are copied as they are.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
