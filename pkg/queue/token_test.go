package queue

import (
	"encoding/base64"
	"testing"
)

// TestWellFormed_AsDecoding: a lock token is well formed exactly when it
// has the length of one and decodes as URL-safe base64 without padding.
func TestWellFormed_AsDecoding(t *testing.T) {
	for _, tok := range []string{
		"AAAAAAAAAAAAAAAAAAAAAA", "Az09-_Az09-_Az09-_Az09", "AAAAAAAAAAAAAAAAAAAAAB", // unused bits set: accepted
		"AAAAAAAAAAAAAAAAAAAAA=", "AAAAAAAAAAAAAAAAAAAA+/", "AAAAAAAAAAAAAAAAAAAA\n\nAA"[:22],
		"AAAAAAAAAA\r\nAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAA\nAA", "AAAAAAAAAAAAAAAAAAAAA", "", "ééééééééééé",
	} {
		_, err := base64.RawURLEncoding.DecodeString(tok)
		if want := len(tok) == TokenLen && err == nil; wellFormed(tok) != want {
			t.Errorf("wellFormed(%q) = %v, want %v", tok, !want, want)
		}
	}
}
