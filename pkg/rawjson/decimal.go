package rawjson

// Decimal is a JSON number in normalised form, ready for exact comparison:
// its value is Sign × 0.Digits × 10^Exp, with Digits free of leading and
// trailing zeros. Zero has Sign 0 and no digits.
type Decimal struct {
	Sign   int8
	Digits string
	Exp    int64
}

// ParseDecimal parses the JSON number literal v. ok is false if v is not a
// JSON number.
func ParseDecimal(v []byte) (d Decimal, ok bool) {
	v = TrimSpace(v)
	neg, intPart, frac, exp, ok := splitNumber(v)
	if !ok {
		return Decimal{}, false
	}
	// Digits of int part followed by frac part; the decimal point sits after
	// len(intPart) digits.
	point := int64(len(intPart))
	all := make([]byte, 0, len(intPart)+len(frac))
	all = append(all, intPart...)
	all = append(all, frac...)
	lead := 0
	for lead < len(all) && all[lead] == '0' {
		lead++
	}
	all = all[lead:]
	point -= int64(lead)
	for len(all) > 0 && all[len(all)-1] == '0' {
		all = all[:len(all)-1]
	}
	if len(all) == 0 {
		return Decimal{}, true
	}
	d.Sign = 1
	if neg {
		d.Sign = -1
	}
	d.Digits = string(all)
	d.Exp = satAdd(point, exp)
	return d, true
}

// Compare returns -1, 0 or +1 as d is less than, equal to or greater than e.
func (d Decimal) Compare(e Decimal) int {
	if d.Sign != e.Sign {
		if d.Sign < e.Sign {
			return -1
		}
		return 1
	}
	if d.Sign == 0 {
		return 0
	}
	c := compareMagnitude(d, e)
	if d.Sign < 0 {
		return -c
	}
	return c
}

func compareMagnitude(d, e Decimal) int {
	if d.Exp != e.Exp {
		if d.Exp < e.Exp {
			return -1
		}
		return 1
	}
	// Same exponent: compare digit strings; a proper prefix is smaller
	// because trailing zeros were removed.
	switch {
	case d.Digits < e.Digits:
		return -1
	case d.Digits > e.Digits:
		return 1
	}
	return 0
}

// CompareNumbers compares two JSON number literals exactly. ok is false if
// either is not a number.
func CompareNumbers(a, b []byte) (c int, ok bool) {
	da, ok1 := ParseDecimal(a)
	db, ok2 := ParseDecimal(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	return da.Compare(db), true
}

// splitNumber splits a JSON number into its parts, checking the grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func splitNumber(v []byte) (neg bool, intPart, frac []byte, exp int64, ok bool) {
	i := 0
	if i < len(v) && v[i] == '-' {
		neg = true
		i++
	}
	start := i
	if i < len(v) && v[i] == '0' {
		i++
	} else {
		for i < len(v) && isDigit(v[i]) {
			i++
		}
	}
	if i == start {
		return false, nil, nil, 0, false
	}
	intPart = v[start:i]
	if i < len(v) && v[i] == '.' {
		i++
		fs := i
		for i < len(v) && isDigit(v[i]) {
			i++
		}
		if i == fs {
			return false, nil, nil, 0, false
		}
		frac = v[fs:i]
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		eneg := false
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			eneg = v[i] == '-'
			i++
		}
		es := i
		for i < len(v) && isDigit(v[i]) {
			if exp < 1<<40 { // saturate: beyond this only the sign matters
				exp = exp*10 + int64(v[i]-'0')
			}
			i++
		}
		if i == es {
			return false, nil, nil, 0, false
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(v) {
		return false, nil, nil, 0, false
	}
	return neg, intPart, frac, exp, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func satAdd(a, b int64) int64 {
	const lim = 1 << 50
	s := a + b
	if s > lim {
		return lim
	}
	if s < -lim {
		return -lim
	}
	return s
}
