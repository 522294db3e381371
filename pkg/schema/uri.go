package schema

import (
	"net/netip"
	"strings"
)

// validURIReference reports whether s is a URI reference (RFC 3986 §4.1):
// an absolute URI or a relative reference such as /sensors/7, with an
// optional fragment. Characters outside ASCII are allowed as RFC 3987 (IRI)
// allows them, since every CloudEvents SDK reads them; white space, control
// characters, a '%' that does not start a %XX escape, a malformed scheme or
// port, brackets outside an IP literal and a second '#' are not. s must be
// valid UTF-8.
func validURIReference(s string) bool {
	if s == "" {
		return false
	}
	rest := s
	if i := indexDelim(s); i >= 0 && s[i] == ':' {
		// A colon before any '/', '?' or '#' ends a scheme: a relative
		// reference's first segment cannot hold one (RFC 3986 §4.2).
		if !validScheme(s[:i]) {
			return false
		}
		rest = s[i+1:]
	}
	return validHierPart(rest)
}

// validAbsoluteURI reports whether s is a URI (RFC 3986 §3): a reference
// with a scheme, such as https://example.com/schema.json. A fragment is
// allowed, as JSON Schema pointers use one.
func validAbsoluteURI(s string) bool {
	i := indexDelim(s)
	return i > 0 && s[i] == ':' && validURIReference(s)
}

// indexDelim returns the index of the first ':', '/', '?' or '#' in s, or
// -1: where a scheme would end.
func indexDelim(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':', '/', '?', '#':
			return i
		}
	}
	return -1
}

// validScheme reports whether s is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ).
func validScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !isDigitByte(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// validHierPart checks what follows the scheme: an optional //authority,
// then the path, query and fragment.
func validHierPart(s string) bool {
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		end := len(s)
		for j := 0; j < len(s); j++ {
			if c := s[j]; c == '/' || c == '?' || c == '#' {
				end = j
				break
			}
		}
		if !validAuthority(s[:end]) {
			return false
		}
		s = s[end:]
	}
	path, fragment, hasFragment := strings.Cut(s, "#")
	if !validURIChars(path, "/?:@") {
		return false
	}
	return !hasFragment || validURIChars(fragment, "/?:@")
}

// validAuthority checks [ userinfo "@" ] host [ ":" port ], host being a
// registered name, an IPv4 address or a bracketed IP literal.
func validAuthority(s string) bool {
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		if !validURIChars(s[:at], ":") {
			return false
		}
		s = s[at+1:]
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 || !validIPLiteral(s[1:end]) {
			return false
		}
		host, port = "", s[end+1:]
		if port != "" && port[0] != ':' {
			return false
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = s[:i], s[i:]
	}
	if port != "" {
		for i := 1; i < len(port); i++ {
			if !isDigitByte(port[i]) {
				return false
			}
		}
	}
	return validHost(host)
}

// validHost checks a registered name or IPv4 address. It may use %XX
// escapes only for bytes of non-ASCII characters or for '%' itself: an
// escaped ASCII character is valid RFC 3986, but Go's net/url, which the
// CloudEvents Go SDK reads sources with, refuses it.
func validHost(host string) bool {
	if !validURIChars(host, "") {
		return false
	}
	for i := strings.IndexByte(host, '%'); i >= 0; i = strings.IndexByte(host, '%') {
		if host[i+1] < '8' && host[i:i+3] != "%25" {
			return false
		}
		host = host[i+3:]
	}
	return true
}

// validIPLiteral checks the inside of [ ]: an IPv6 address, without a
// zone. IPvFuture is refused, as Go's net/url refuses it.
func validIPLiteral(s string) bool {
	addr, err := netip.ParseAddr(s)
	return err == nil && addr.Is6() && addr.Zone() == ""
}

// validURIChars reports whether s holds only unreserved characters,
// sub-delims, %XX escapes, bytes of non-ASCII characters and the bytes of
// extra.
func validURIChars(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case uriChar[c]:
		case c == '%':
			if i+2 >= len(s) || !isHexByte(s[i+1]) || !isHexByte(s[i+2]) {
				return false
			}
			i += 2
		case strings.IndexByte(extra, c) >= 0:
		default:
			return false
		}
	}
	return true
}

// uriChar holds the bytes that may appear as they are anywhere in a URI
// reference component: unreserved characters, sub-delims, and the bytes of
// non-ASCII characters (RFC 3987).
var uriChar = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isUnreserved(byte(c)) || isSubDelim(byte(c)) || c >= 0x80
	}
	return t
}()

func isUnreserved(c byte) bool {
	return isAlpha(c) || isDigitByte(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool { return c != 0 && strings.IndexByte("!$&'()*+,;=", c) >= 0 }

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

func isHexByte(c byte) bool { return isDigitByte(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
