package schema

import "strings"

// validMediaType reports whether s is a media type as RFC 2045 §5.1 writes
// one and RFC 2046 defines it: type "/" subtype, then any number of
// ";" attribute "=" value parameters, value a token or a quoted string, such
// as `text/plain; charset="utf-8"`. White space may surround s, the
// semicolons and the equals signs (as Go's mime.ParseMediaType allows), but
// not split a token; a parameter may not be named twice (RFC 6838 §4.3),
// names compared ignoring case. s must be valid UTF-8.
func validMediaType(s string) bool {
	s = trimOWS(s)
	typ, s := cutToken(s)
	if typ == "" || !strings.HasPrefix(s, "/") {
		return false
	}
	sub, s := cutToken(s[1:])
	if sub == "" {
		return false
	}
	var buf [4]string
	names := buf[:0] // parameter names, to find one given twice
	for s = trimOWS(s); s != ""; s = trimOWS(s) {
		if s[0] != ';' {
			return false
		}
		name, rest := cutToken(trimOWS(s[1:]))
		rest = trimOWS(rest)
		if name == "" || !strings.HasPrefix(rest, "=") {
			return false
		}
		rest = trimOWS(rest[1:])
		var ok bool
		if s, ok = cutParameterValue(rest); !ok {
			return false
		}
		for _, n := range names {
			if strings.EqualFold(n, name) {
				return false
			}
		}
		if len(names) == maxMediaTypeParameters {
			return false
		}
		names = append(names, name)
	}
	return true
}

// maxMediaTypeParameters bounds the parameters of a datacontenttype, so
// that finding a repeated one stays cheap; real media types have one or two.
const maxMediaTypeParameters = 32

// cutToken splits s after its leading RFC 2045 token (which may be empty).
func cutToken(s string) (token, rest string) {
	i := 0
	for i < len(s) && isTokenByte(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// cutParameterValue splits s after its leading token or quoted string; ok
// is false when there is neither, or a quoted string is not closed.
func cutParameterValue(s string) (rest string, ok bool) {
	if !strings.HasPrefix(s, `"`) {
		tok, rest := cutToken(s)
		return rest, tok != ""
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++ // the escaped character, whatever it is
		case c == '"':
			return s[i+1:], true
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", false
		}
	}
	return "", false
}

// isTokenByte reports whether c may be part of an RFC 2045 token: a
// printable ASCII character other than white space and tspecials.
func isTokenByte(c byte) bool { return tokenByte[c] }

var tokenByte = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = strings.IndexByte(`()<>@,;:\"/[]?=`, byte(c)) < 0
	}
	return t
}()

// trimOWS trims spaces and tabs.
func trimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// mediaTypeOf returns the media type of the datacontenttype literal v, in
// lower case and without parameters, or "" when v is nil.
func mediaTypeOf(v []byte) string {
	if v == nil {
		return ""
	}
	ct, _ := unquote(v)
	mediaType, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(trimOWS(mediaType))
}

// isJSONMediaType reports whether the lower-case media type t (parameters
// removed) declares JSON: */json or */*+json, as the CloudEvents JSON format
// defines it (§3.1.1).
func isJSONMediaType(t string) bool {
	_, sub, ok := strings.Cut(t, "/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}
