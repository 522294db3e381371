package rawjson

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// plainASCII8ByTable is plainASCII8 a byte at a time.
func plainASCII8ByTable(x uint64) bool {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], x)
	for _, c := range b {
		if !plainStrict[c] || !plainLax[c] {
			return false
		}
	}
	return true
}

func TestPlainASCII8MatchesTables(t *testing.T) {
	check := func(x uint64) {
		if got, want := plainASCII8(x), plainASCII8ByTable(x); got != want {
			t.Fatalf("plainASCII8(%#016x) = %v, want %v", x, got, want)
		}
	}
	// Every byte value at every position, among plain bytes and among
	// bytes that each test looks for.
	for _, fill := range []byte{'a', ' ', '~', 0x1f, '"', '\\', 0x80, 0xff, 0x21, 0x5b, 0x5d} {
		for pos := range 8 {
			for c := range 256 {
				var b [8]byte
				for i := range b {
					b[i] = fill
				}
				b[pos] = byte(c)
				check(binary.LittleEndian.Uint64(b[:]))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		check(r.Uint64())
		// Mostly printable ASCII, as in real strings.
		var b [8]byte
		for i := range b {
			b[i] = byte(0x1e + r.IntN(0x62))
		}
		check(binary.LittleEndian.Uint64(b[:]))
	}
}
