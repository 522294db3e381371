package queue

import (
	"crypto/rand"
	"encoding/base64"
	"unsafe"
)

// tokenBytes is the randomness of a lock token: 128 bits.
const tokenBytes = 16

// TokenLen is the length of a lock token's text.
var TokenLen = base64.RawURLEncoding.EncodedLen(tokenBytes)

// tokenSource hands out lock tokens made in batches: one read of
// randomness and one string per batch, so a receive of many events costs
// one call into crypto/rand and two allocations. A token shares its batch's
// string, a few kilobytes at most, while it is held.
type tokenSource struct {
	text string // tokens not handed out yet, TokenLen characters each
}

// next returns an unguessable lock token; n is how many more the caller
// expects to take, to size the next batch.
func (ts *tokenSource) next(n int) string {
	if len(ts.text) < TokenLen {
		n = max(n, 1)
		raw := make([]byte, tokenBytes*n)
		_, _ = rand.Read(raw) // crypto/rand.Read never fails
		text := make([]byte, TokenLen*n)
		for i := range n {
			base64.RawURLEncoding.Encode(text[i*TokenLen:], raw[i*tokenBytes:(i+1)*tokenBytes])
		}
		clear(raw)
		// text is never written again: the string shares its bytes
		// instead of copying them.
		ts.text = unsafe.String(unsafe.SliceData(text), len(text))
	}
	t := ts.text[:TokenLen]
	ts.text = ts.text[TokenLen:]
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
