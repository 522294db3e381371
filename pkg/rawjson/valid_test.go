package rawjson_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

var validCases = []string{
	``, ` `, `1`, `-0`, `-01`, `01`, `1.`, `1.5e`, `1.5e+3`, `1E-2`, `.5`, `-`, `+1`, `true`, `tru`, `nul`, `null `,
	`"a"`, `"\u00e9\n"`, `"\u00g0"`, `"\x"`, "\"a\tb\"", `"unterminated`, `"\"`, `[]`, `[1,]`, `[,1]`, `[1 2]`,
	`{}`, `{"a":1}`, `{"a" 1}`, `{"a":}`, `{"a":1,}`, `{a:1}`, `{"a":[{"b":null}]}`, ` {"a" : [ 1 , 2 ] } `,
	`[1] [2]`, `{"a":1}}`, "\"\xff\xfe\"", `[` + strings.Repeat(`[`, 10) + strings.Repeat(`]`, 11),
	strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000),
	strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001),
	strings.Repeat(`{"a":`, 10001) + `1` + strings.Repeat(`}`, 10001),
}

func TestValidCount(t *testing.T) {
	for in, want := range map[string]int{`[]`: 0, `[1]`: 1, ` [ {"a":[1,2,3]}, [4,5], "x" ] `: 3, `{"a":[1,2]}`: 0, `7`: 0} {
		if n, ok := rawjson.ValidCount([]byte(in)); !ok || n != want {
			t.Errorf("ValidCount(%s) = %d, %v; want %d", in, n, ok, want)
		}
	}
	if _, ok := rawjson.ValidCount([]byte(`[1,`)); ok {
		t.Error("ValidCount accepted invalid JSON")
	}
}

func TestValid(t *testing.T) {
	for _, c := range validCases {
		if got, want := rawjson.Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.40q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

// FuzzValid checks that Valid agrees with encoding/json.Valid.
func FuzzValid(f *testing.F) {
	for _, c := range validCases[:len(validCases)-3] {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := rawjson.Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 100 {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"id":"1234","subject":"/a/b","eventType":"T","eventTime":"2026-01-01T00:00:00Z","dataVersion":"1","data":{"n":12.5,"ok":true,"s":"` + strings.Repeat("x", 900) + `"}}`)
	}
	sb.WriteString("]")
	body := []byte(sb.String())
	b.Run("rawjson", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			rawjson.Valid(body)
		}
	})
	b.Run("rawjson-strict", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := rawjson.ValidStrict(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			json.Valid(body)
		}
	})
}
