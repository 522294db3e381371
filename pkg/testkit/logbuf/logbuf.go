// Package logbuf is a log destination for tests: a buffer safe for
// concurrent writes (a component's goroutines log while the test reads),
// with readers for zerolog's JSON lines.
package logbuf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// Buffer collects what is written to it. The zero value is ready to use;
// every method is safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written since the last Reset or Take.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Contains reports whether what was written holds s.
func (b *Buffer) Contains(s string) bool { return strings.Contains(b.String(), s) }

// Reset forgets what was written.
func (b *Buffer) Reset() {
	b.mu.Lock()
	b.buf.Reset()
	b.mu.Unlock()
}

// Lines decodes every JSON line written, and fails the test at a line that
// is not JSON.
func (b *Buffer) Lines(tb testing.TB) []map[string]any {
	tb.Helper()
	return Decode[map[string]any](tb, b)
}

// Take is Lines, and forgets the lines it returns.
func (b *Buffer) Take(tb testing.TB) []map[string]any {
	tb.Helper()
	b.mu.Lock()
	data := bytes.Clone(b.buf.Bytes())
	b.buf.Reset()
	b.mu.Unlock()
	return decode[map[string]any](tb, data)
}

// Messages returns the lines of b whose message is msg.
func (b *Buffer) Messages(tb testing.TB, msg string) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, l := range b.Lines(tb) {
		if l["message"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// Decode decodes every JSON line written to b into a T, and fails the test
// at a line that is not JSON.
func Decode[T any](tb testing.TB, b *Buffer) []T {
	tb.Helper()
	b.mu.Lock()
	data := bytes.Clone(b.buf.Bytes())
	b.mu.Unlock()
	return decode[T](tb, data)
}

func decode[T any](tb testing.TB, data []byte) []T {
	tb.Helper()
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			tb.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, v)
	}
	return out
}
