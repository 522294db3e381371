// Package rawjson reads JSON text in place, without building Go values: it
// walks objects and arrays, finds a value by a case-insensitive path, unquotes
// strings and compares numbers as exact decimals.
//
// Every function that takes a document assumes it is valid JSON (check it
// once with encoding/json.Valid); on invalid input they return wrong answers
// but never panic.
package rawjson
