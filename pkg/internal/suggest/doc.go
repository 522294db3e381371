// Package suggest finds, among known names, the one a misspelt name most
// likely meant, for messages that say "did you mean …?". Names are compared
// ignoring case, by the number of single-character edits (insertions,
// deletions, substitutions and swaps of two neighbours) that turn one into
// the other. It imports only the standard library.
package suggest
