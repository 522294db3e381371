package rawjson

// WithoutTrailingCommas returns a copy of b without the commas that end
// an object's members or an array's elements ({"a": 1,} or [1, 2,]), and
// whether it removed any. Json.NET, which the original Event Grid module
// read its requests with, accepts such a comma on purpose
// (https://github.com/JamesNK/Newtonsoft.Json/issues/818), and the
// module's own documentation has bodies that rely on it. Only a comma
// after a value goes: "[,]", "{,}" and ",," stay as they are, as does
// everything inside strings. The result is not checked: it is JSON only
// if b was JSON but for those commas.
func WithoutTrailingCommas(b []byte) ([]byte, bool) {
	var out []byte
	last := 0 // b[last:] is not copied yet
	prev := byte(0)
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			i = StringEnd(b, i) - 1 // its closing quote, or b's last byte
			prev = '"'
			continue
		case isSpace(c):
			continue
		case c == ',' && prev != 0 && prev != '[' && prev != '{' && prev != ',' && prev != ':':
			if j := skipSpace(b, i+1); j < len(b) && (b[j] == '}' || b[j] == ']') {
				out = append(out, b[last:i]...)
				last = i + 1
			}
		}
		prev = c
	}
	if out == nil {
		return b, false
	}
	return append(out, b[last:]...), true
}
