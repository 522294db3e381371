package rawjson_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

func TestLocate(t *testing.T) {
	tests := []struct {
		name, in string
		// want is what Error() must hold.
		want []string
		off  int
	}{
		// The original module's advanced-filtering page, as printed.
		{"StarBeforeNumber", "{\n  \"value\": *456\n}", []string{"line 2, column 12:", "invalid character '*' looking for beginning of value",
			"a number is written with digits only, without '*': 456"}, 13},
		{"TrailingCommaInObject", "{\"a\": 1,\n}", []string{"line 2, column 1:", "remove the comma before '}'"}, 9},
		{"TrailingCommaInArray", "[1, 2, ]", []string{"line 1, column 8:", "remove the comma before ']'"}, 7},
		{"MissingComma", "{\"a\": 1 \"b\": 2}", []string{"line 1, column 9:", "after object key:value pair", "expected ',' before the next member, or '}' after the last"}, 8},
		{"MissingColon", `{"a" 1}`, []string{"line 1, column 6:", "expected ':' between the member name and its value"}, 5},
		{"SingleQuotes", `{'a': 1}`, []string{"line 1, column 2:", "not single quotes"}, 1},
		{"Comment", "[1, // one\n2]", []string{"line 1, column 5:", "JSON has no comments"}, 4},
		{"CutShort", `{"topics": {"a": {}`, []string{"line 1, column 19: unexpected end of JSON input", "expected more"}, 19},
		{"Empty", ``, []string{"line 1, column 1: unexpected end of JSON input"}, 0},
		{"Garbage", `[{}] x`, []string{"line 1, column 6:", "after top-level value", "the end of the text"}, 5},
		{"ControlInString", "[\"a\tb\"]", []string{"line 1, column 4:", "in string literal", "escaped"}, 3},
		{"BadEscape", `["a\qb"]`, []string{"line 1, column 5:", "escapes"}, 4},
		{"BadNumber", `[1.x]`, []string{"line 1, column 4:", "expected a digit"}, 3},
		{"ColumnsCountCharacters", "{\"é\": {} \"b\": {}}", []string{"line 1, column 10:"}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			se := rawjson.Locate([]byte(tt.in))
			if se == nil {
				t.Fatalf("Locate(%q) = nil, want an error", tt.in)
			}
			for _, w := range tt.want {
				if !strings.Contains(se.Error(), w) {
					t.Errorf("Locate(%q) = %q, want it to hold %q", tt.in, se.Error(), w)
				}
			}
			if se.Offset != tt.off {
				t.Errorf("Locate(%q).Offset = %d, want %d", tt.in, se.Offset, tt.off)
			}
		})
	}
	for _, in := range []string{`{}`, ` [1, {"a": "b,]"}] `, `"x"`} {
		if se := rawjson.Locate([]byte(in)); se != nil {
			t.Errorf("Locate(%q) = %v, want nil", in, se)
		}
	}
}

var commaCases = []struct{ in, want string }{
	{`{"a": 1,}`, `{"a": 1}`},
	{`[1, 2, ]`, `[1, 2 ]`},
	{"{\n  \"a\": {\"b\": [true,],},\n}", "{\n  \"a\": {\"b\": [true]}\n}"},
	{`["a,]", "b",]`, `["a,]", "b"]`},
	{`["\",]",]`, `["\",]"]`},
	{`[{},[],null,]`, `[{},[],null]`},
}

func TestWithoutTrailingCommas(t *testing.T) {
	for _, c := range commaCases {
		got, ok := rawjson.WithoutTrailingCommas([]byte(c.in))
		if !ok || string(got) != c.want {
			t.Errorf("WithoutTrailingCommas(%s) = %s, %v; want %s, true", c.in, got, ok, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("WithoutTrailingCommas(%s) = %s, which is not JSON", c.in, got)
		}
	}
	// Nothing else is a trailing comma.
	for _, in := range []string{`[,]`, `{,}`, `[1,,]`, `[1,,2]`, `,`, `[1,2]`, `{"a,}":1}`, `"x,]"`, `[1 ,2]`, `"unterminated,]`} {
		if got, ok := rawjson.WithoutTrailingCommas([]byte(in)); ok || string(got) != in {
			t.Errorf("WithoutTrailingCommas(%s) = %s, %v; want it unchanged", in, got, ok)
		}
	}
}

// FuzzWithoutTrailingCommas: valid JSON has no trailing comma to remove;
// what is removed is commas only, each before a '}' or ']'; and once they
// are gone there are none left.
func FuzzWithoutTrailingCommas(f *testing.F) {
	for _, c := range commaCases {
		f.Add([]byte(c.in))
	}
	for _, c := range validCases[:len(validCases)-3] {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out, ok := rawjson.WithoutTrailingCommas(b)
		if !ok {
			if !bytes.Equal(out, b) {
				t.Fatalf("WithoutTrailingCommas(%q) changed it to %q but reports no change", b, out)
			}
			return
		}
		if json.Valid(b) {
			t.Fatalf("WithoutTrailingCommas(%q) changed valid JSON to %q", b, out)
		}
		if len(out) >= len(b) {
			t.Fatalf("WithoutTrailingCommas(%q) = %q, no shorter", b, out)
		}
		// out is b without some commas, each followed by space and a closer.
		j := 0
		for i := 0; i < len(b); i++ {
			if j < len(out) && b[i] == out[j] {
				j++
				continue
			}
			k := i + 1
			for k < len(b) && strings.IndexByte(" \t\r\n", b[k]) >= 0 {
				k++
			}
			if b[i] != ',' || k == len(b) || (b[k] != '}' && b[k] != ']') {
				t.Fatalf("WithoutTrailingCommas(%q) = %q, which drops %q at %d", b, out, b[i], i)
			}
		}
		if j != len(out) {
			t.Fatalf("WithoutTrailingCommas(%q) = %q, which is not a subsequence of it", b, out)
		}
		if again, more := rawjson.WithoutTrailingCommas(out); more {
			t.Fatalf("WithoutTrailingCommas(%q) left trailing commas: %q, then %q", b, out, again)
		}
	})
}
