package rawjson_test

import (
	"encoding/json"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

func TestCompareToDecimal(t *testing.T) {
	nums := []string{
		"0", "-0", "0.0", "-0.000e5", "1", "-1", "4.56", "4.5600", "4.561", "45.6e-1", "0.000456e4",
		"1e400", "1e399", "-1e400", "9007199254740993", "9007199254740992", "1e-400", "-1e-400",
		"100", "1e2", "10.0e1", "99.999", "123456789012345678901234567890", "0.1", "0.01", "10",
	}
	for _, a := range nums {
		for _, b := range nums {
			d, ok := rawjson.ParseDecimal([]byte(b))
			if !ok {
				t.Fatalf("ParseDecimal(%q) failed", b)
			}
			want, _ := rawjson.CompareNumbers([]byte(a), []byte(b))
			got, ok := rawjson.CompareToDecimal([]byte(" "+a+" "), d)
			if !ok || got != want {
				t.Errorf("CompareToDecimal(%q, %q) = %d, %v; want %d, true", a, b, got, ok, want)
			}
		}
	}
	for _, bad := range []string{"", "-", "01", "1.", ".5", "1e", "abc", `"1"`, "true", "1 2"} {
		if _, ok := rawjson.CompareToDecimal([]byte(bad), rawjson.Decimal{}); ok {
			t.Errorf("CompareToDecimal(%q) ok = true, want false", bad)
		}
	}
}

func TestCompareToDecimalAllocs(t *testing.T) {
	d, _ := rawjson.ParseDecimal([]byte("4.56"))
	v := []byte("4.5600")
	if n := testing.AllocsPerRun(100, func() { rawjson.CompareToDecimal(v, d) }); n != 0 {
		t.Errorf("CompareToDecimal allocates %v times per call, want 0", n)
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "tab\tnl\ncr\r", "\x00\x1f", "ÄÖ😀"} {
		got := rawjson.AppendString([]byte("x"), s)
		var back string
		if err := json.Unmarshal(got[1:], &back); err != nil || back != s || got[0] != 'x' {
			t.Errorf("AppendString(%q) = %s (%v)", s, got, err)
		}
		if n := rawjson.StringLen(s); n != len(got)-1 {
			t.Errorf("StringLen(%q) = %d, want %d", s, n, len(got)-1)
		}
	}
}
