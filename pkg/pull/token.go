package pull

import (
	"crypto/rand"
	"encoding/base64"
)

// tokenBytes is the randomness of a lock token: 128 bits.
const tokenBytes = 16

// TokenLen is the length of a lock token's text.
var TokenLen = base64.RawURLEncoding.EncodedLen(tokenBytes)

// tokenSource hands out lock tokens from one read of randomness per batch,
// so a receive of many events costs one call into crypto/rand.
type tokenSource struct {
	buf []byte
}

// next returns an unguessable lock token; n is how many more the caller
// expects to take, to size the next read.
func (ts *tokenSource) next(n int) string {
	if len(ts.buf) < tokenBytes {
		ts.buf = make([]byte, tokenBytes*max(n, 1))
		_, _ = rand.Read(ts.buf) // crypto/rand.Read never fails
	}
	t := base64.RawURLEncoding.EncodeToString(ts.buf[:tokenBytes])
	clear(ts.buf[:tokenBytes])
	ts.buf = ts.buf[tokenBytes:]
	return t
}

// wellFormed reports whether t could be a lock token this store made.
// A token of URL-safe base64 letters only, as every token made here, is
// checked without decoding it; anything else is decoded.
func wellFormed(t string) bool {
	if len(t) != TokenLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			_, err := base64.RawURLEncoding.DecodeString(t)
			return err == nil
		}
	}
	return true
}
