package rawjson

import "testing"

// stringEndByByte is StringEnd as a byte-by-byte scan.
func stringEndByByte(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

func TestStringEndMatchesByteScan(t *testing.T) {
	// Every string of up to 7 bytes over the bytes that matter.
	alphabet := []byte{'"', '\\', 'x'}
	var walk func(b []byte)
	walk = func(b []byte) {
		for i := range b {
			if got, want := StringEnd(b, i), stringEndByByte(b, i); got != want {
				t.Fatalf("StringEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
		if len(b) == 7 {
			return
		}
		for _, c := range alphabet {
			walk(append(b, c))
		}
	}
	walk(nil)
}

func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"a\\"b"`, `"\\\"\\"`, `"unterminated\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := range b {
			if got, want := StringEnd(b, i), stringEndByByte(b, i); got != want {
				t.Fatalf("StringEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	})
}
