// Package console serves the console page: a single page, embedded in the
// binary, that shows what the broker holds, what it delivered and what it
// gave up on (docs/console.md). The page is a client of the broker's HTTP
// API like any other: this package serves its files and nothing else, and
// imports nothing of the broker. Its answers carry a strict
// Content-Security-Policy and refuse framing.
package console
