package schema

import (
	"mime"
	"net/url"
	"testing"
)

func TestValidMediaType(t *testing.T) {
	for _, s := range []string{
		"application/json", "text/plain; charset=utf-8", " TEXT/Plain ;CharSet = \"utf-8\" ", "application/vnd.a+json;v=2;q=x",
		`text/plain; a="x\"y"; b=""`, "image/*", "multipart/form-data; boundary=----abc", "a/b;c*=utf-8''%E2%82%AC",
	} {
		if !validMediaType(s) {
			t.Errorf("validMediaType(%q) = false, want true", s)
		}
		if _, _, err := mime.ParseMediaType(s); err != nil {
			t.Errorf("mime.ParseMediaType(%q): %v", s, err)
		}
	}
	for _, s := range []string{
		"", " ", "xyz", "text", "text/", "/plain", "text/plain/x", "text /plain", "text/ plain", "text/plain;", "text/plain; ;a=b",
		"text/plain; a", "text/plain; a=", "text/plain; =b", "text/plain; a=b c", "text/plain; a=b; A=c", `text/plain; a="b`,
		`text/plain; a="b\"`, "text/plain; a=\"\x01\"", "te(xt/plain", "text/pl@in", "tëxt/plain", "text/plain,text/html",
	} {
		if validMediaType(s) {
			t.Errorf("validMediaType(%q) = true, want false", s)
		}
	}
}

func TestValidURIReference(t *testing.T) {
	for _, s := range []string{
		"/", "a", "/sensors/7", "1-555-123-4567", "urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66", "mailto:a@b.c",
		"https://example.com", "https://u:p@example.com:8080/a/b;c?d=e&f=%20#g/h?i", "//example.com/x", "http://[::1]/",
		"http://[::ffff:1.2.3.4]:80", "http://h:/", "?q", "#f", "./a:b", "caf%C3%A9", "/température", "http://h%C3%A9/",
		"http://100%25.example/",
	} {
		if !validURIReference(s) {
			t.Errorf("validURIReference(%q) = false, want true", s)
		}
		if _, err := url.Parse(s); err != nil {
			t.Errorf("url.Parse(%q): %v", s, err)
		}
	}
	for _, s := range []string{
		"", " ", "a b", "1:2", ":a", "a%", "a%2", "a%zz", "/a#b#c", "a\"b", "a<b>", "a\\b", "a{b}", "a|b", "a^b", "a`b",
		"/a[0]", "http://[::1", "http://[v1.fe80::a+en1]/", "http://[1.2.3.4]/", "http://[fe80::1%25en0]/", "http://[::1]x/", "http://h:8a/", "http://a b/", "http://a%41b/", "http://h[1]/", "a\tb", "a\x7fb",
	} {
		if validURIReference(s) {
			t.Errorf("validURIReference(%q) = true, want false", s)
		}
	}
	for s, want := range map[string]bool{
		"https://example.com/s.json": true, "urn:a": true, "a:": true, "https://e/s#/defs/x": true,
		"/s.json": false, "s.json": false, "#": false, "": false, "1a:b": false,
	} {
		if got := validAbsoluteURI(s); got != want {
			t.Errorf("validAbsoluteURI(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestSyntaxAgreesWithGo: every short string over an alphabet of the
// characters that matter that the validators accept is also accepted by the
// parsers of Go's standard library, which the CloudEvents Go SDK reads
// datacontenttype (mime.ParseMediaType), source and dataschema (url.Parse)
// with; receivers must not refuse what the broker let in.
func TestSyntaxAgreesWithGo(t *testing.T) {
	check := func(alphabet string, maxLen int, f func(s string)) {
		var walk func(prefix string)
		walk = func(prefix string) {
			f(prefix)
			if len(prefix) == maxLen {
				return
			}
			for i := 0; i < len(alphabet); i++ {
				walk(prefix + alphabet[i:i+1])
			}
		}
		walk("")
	}
	n := 0
	check(`a/;=" \*%`, 6, func(s string) {
		if validMediaType(s) {
			n++
			if _, _, err := mime.ParseMediaType(s); err != nil {
				t.Errorf("validMediaType(%q) = true, but mime.ParseMediaType: %v", s, err)
			}
		}
	})
	check("a1:/?#[]@%.", 5, func(s string) {
		if validURIReference(s) {
			n++
			if _, err := url.Parse(s); err != nil {
				t.Errorf("validURIReference(%q) = true, but url.Parse: %v", s, err)
			}
		}
	})
	if n < 1000 {
		t.Fatalf("only %d strings accepted: the walk is too small to tell", n)
	}
}

// TestPathOfUnreservedIsAURIReference: the conversion's shortcut for a
// topic of unreserved characters and '/' takes no string that
// validURIReference refuses, so the source it writes is the same.
func TestPathOfUnreservedIsAURIReference(t *testing.T) {
	var walk func(prefix string)
	n := 0
	walk = func(prefix string) {
		if pathOfUnreserved(prefix) {
			n++
			if !validURIReference(prefix) {
				t.Errorf("pathOfUnreserved(%q) = true, but validURIReference = false", prefix)
			}
		}
		if len(prefix) == 5 {
			return
		}
		for _, c := range "a0/.-_~:%" {
			walk(prefix + string(c))
		}
	}
	walk("")
	if pathOfUnreserved("") || pathOfUnreserved("a:b") || pathOfUnreserved("a%20") || n < 10000 {
		t.Fatalf("pathOfUnreserved took the empty string, a colon or a percent sign, or only %d strings", n)
	}
}

func TestValidInteger(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "7": true, "-7": true, "2147483647": true, "-2147483648": true,
		"2147483648": false, "-2147483649": false, "99999999999": false, "": false, "-": false, "01": false,
		"1.0": false, "1e3": false, "+1": false, " 1": false, "1 ": false, "0x1": false,
	} {
		if got := validInteger(s); got != want {
			t.Errorf("validInteger(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestBadStringRune(t *testing.T) {
	for s, want := range map[string]rune{
		"a\x00": 0, "\x1f": 0x1f, "\x7f": 0x7f, "\u0080": 0x80, "a\u009f": 0x9f, "\ufdd0": 0xfdd0, "\ufdef": 0xfdef,
		"\ufffe": 0xfffe, "\uffff": 0xffff, "\U0001fffe": 0x1fffe, "\U0010ffff": 0x10ffff,
		"sixteen bytes ok\u0085": 0x85, "eight ok\ufdd0 and more": 0xfdd0, "caf\u00e9 au lait\x7f": 0x7f,
	} {
		if r, bad := badStringRune(s); !bad || r != want {
			t.Errorf("badStringRune(%q) = %U, %v; want %U", s, r, bad, want)
		}
	}
	for _, s := range []string{"", "plain ASCII ~", "\u00a0é€😀", "\ufdcf\ufdf0\ufffd", "\U0001fffd", "more than eight bytes, café 😀 ~"} {
		if r, bad := badStringRune(s); bad {
			t.Errorf("badStringRune(%q) = %U, want none", s, r)
		}
	}
}

// TestTextChecksByteByByte: the checks that test eight bytes at once agree
// with a rune-by-rune reading, whatever byte stands at whatever place.
func TestTextChecksByteByByte(t *testing.T) {
	const base = "abcdefghijklmnopqrstuvwx" // three words
	for at := range len(base) {
		for c := range 256 {
			if c == '"' {
				continue // cannot stand unescaped in a JSON string
			}
			s := base[:at] + string([]byte{byte(c)}) + base[at+1:]
			wantRune, wantBad := rune(0), false
			for _, r := range s {
				if r < 0x20 || 0x7f <= r && r <= 0x9f || 0xfdd0 <= r && r <= 0xfdef || r&0xfffe == 0xfffe {
					wantRune, wantBad = r, true
					break
				}
			}
			if r, bad := badStringRune(s); r != wantRune || bad != wantBad {
				t.Fatalf("badStringRune(%q) = %U, %v; want %U, %v", s, r, bad, wantRune, wantBad)
			}
			wantPlain := 0x20 <= c && c < 0x7f && c != '\\'
			if got, ok := plainText([]byte(`"` + s + `"`)); ok != wantPlain || ok && got != s {
				t.Fatalf("plainText(%q) = %q, %v; want plain %v", s, got, ok, wantPlain)
			}
		}
	}
}
