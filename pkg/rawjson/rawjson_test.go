package rawjson_test

import (
	"encoding/json"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

func TestLookup(t *testing.T) {
	doc := []byte(` { "id" : "1", "Data": {"a": {"B": [1,2]}, "x\u0041": 5, "s": "q\"}"}, "ID": "upper", "n": null } `)
	tests := []struct {
		path []string
		want string
		ok   bool
	}{
		{[]string{"id"}, `"1"`, true},
		{[]string{"ID"}, `"upper"`, true}, // exact match wins over folded
		{[]string{"Id"}, `"1"`, true},     // first folded match
		{[]string{"data", "a", "b"}, `[1,2]`, true},
		{[]string{"DATA", "xa"}, `5`, true}, // escaped key, folded
		{[]string{"data", "s"}, `"q\"}"`, true},
		{[]string{"data", "missing"}, ``, false},
		{[]string{"id", "deeper"}, ``, false},
		{[]string{"n"}, `null`, true},
	}
	for _, tt := range tests {
		got, ok := rawjson.Lookup(doc, tt.path)
		if ok != tt.ok || string(got) != tt.want {
			t.Errorf("Lookup(%v) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

func TestArrayEach(t *testing.T) {
	var got []string
	ok := rawjson.ArrayEach([]byte(` [ {"a":[1,{}]} , "x,]" ,3, true ,null] `), func(i int, v []byte) bool {
		got = append(got, string(v))
		return true
	})
	want := []string{`{"a":[1,{}]}`, `"x,]"`, `3`, `true`, `null`}
	if !ok || len(got) != len(want) {
		t.Fatalf("ArrayEach = %q, %v", got, ok)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("element %d = %q, want %q", i, got[i], want[i])
		}
	}
	if rawjson.ArrayEach([]byte(`{}`), func(int, []byte) bool { return true }) {
		t.Error("ArrayEach accepted an object")
	}
}

func TestUnquote(t *testing.T) {
	for in, want := range map[string]string{`"abc"`: "abc", `"a\nb\u00e9"`: "a\nbé", ` "" `: ""} {
		got, ok := rawjson.Unquote([]byte(in))
		if !ok || got != want {
			t.Errorf("Unquote(%s) = %q, %v", in, got, ok)
		}
	}
	if _, ok := rawjson.Unquote([]byte(`12`)); ok {
		t.Error("Unquote accepted a number")
	}
}

func TestCompareNumbers(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"4.56", "4.5600", 0},
		{"4.56", "4.560000000000000000000000001", -1},
		{"0", "-0.0e10", 0},
		{"1e2", "100", 0},
		{"100", "1E+2", 0},
		{"-1", "1", -1},
		{"-2", "-1", -1},
		{"0.001", "1e-3", 0},
		{"12345678901234567890123", "12345678901234567890122", 1},
		{"1e-400", "0", 1},
		{"-1e-400", "0", -1},
		{"1e400", "1e399", 1},
		{"9007199254740993", "9007199254740992", 1}, // beyond float64 precision
		{"0.1", "0.10000000000000001", -1},
		{"10", "9.99999", 1},
		{"1e99999999999999999999", "1e99999999999999999998", 0}, // exponents saturate
	}
	for _, tt := range tests {
		got, ok := rawjson.CompareNumbers([]byte(tt.a), []byte(tt.b))
		if !ok || got != tt.want {
			t.Errorf("CompareNumbers(%s, %s) = %d, %v; want %d", tt.a, tt.b, got, ok, tt.want)
		}
		back, _ := rawjson.CompareNumbers([]byte(tt.b), []byte(tt.a))
		if back != -tt.want {
			t.Errorf("CompareNumbers(%s, %s) = %d; want %d", tt.b, tt.a, back, -tt.want)
		}
	}
	for _, bad := range []string{"", "-", "01", "1.", ".5", "1e", "+1", "0x10", "1e+", "NaN", `"1"`} {
		if _, ok := rawjson.ParseDecimal([]byte(bad)); ok {
			t.Errorf("ParseDecimal(%q) accepted", bad)
		}
	}
}

func FuzzWalk(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,"x"]}}`, `[1,2,{"c":null}]`, `"\u00e9"`, `{"a\"b":1}`, `{`, `[`, `"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Must not panic on any input, valid or not.
		rawjson.ObjectEach(b, func(k, v []byte) bool { rawjson.KindOf(v); rawjson.Unquote(v); return true })
		rawjson.ArrayEach(b, func(int, []byte) bool { return true })
		rawjson.Lookup(b, []string{"a", "b"})
		rawjson.ParseDecimal(b)
		if json.Valid(b) && rawjson.KindOf(b) == rawjson.Number {
			if _, ok := rawjson.ParseDecimal(b); !ok {
				t.Fatalf("valid number %q not parsed", b)
			}
		}
	})
}
