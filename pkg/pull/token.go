package pull

import (
	"crypto/rand"
	"encoding/base64"
)

// tokenBytes is the randomness of a lock token: 128 bits.
const tokenBytes = 16

// tokenLen is the length of a lock token's text.
var tokenLen = base64.RawURLEncoding.EncodedLen(tokenBytes)

// newToken returns an unguessable lock token.
func newToken() string {
	var b [tokenBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// wellFormed reports whether t could be a lock token this store made.
func wellFormed(t string) bool {
	if len(t) != tokenLen {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(t)
	return err == nil
}
